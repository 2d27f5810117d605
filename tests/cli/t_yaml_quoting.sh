#!/usr/bin/env bash
# What render writes reads back as written in two real YAML readers (yaml_readback.py): kubectl
# (Go's yaml.v2, how manifests are read; the setup step installs it) and PyYAML (YAML 1.1;
# Debian's python3-yaml, which the setup step installs). Strings some reader would type as
# something else ("=", "y", "0o17", "1_000", "1:30", "2001-12-14", ".inf", "<<") must be quoted:
# testdata/yaml-quoting/corpus.json (every disagreement found, replayed each run), then 3,000
# strings generated from a printed seed (PO_YAML_SEED to replay one, PO_YAML_CASES for more).
. "$(dirname "$0")/lib.sh"
for need in kubectl /usr/bin/python3; do
  command -v "$need" >/dev/null || { echo "FAIL $need is missing (scripts/setup.sh installs it)"; exit 1; }
done
/usr/bin/python3 -c 'import yaml' 2>/dev/null || { echo "FAIL PyYAML is missing (scripts/setup.sh installs python3-yaml)"; exit 1; }
/usr/bin/python3 tests/cli/yaml_readback.py "$bin" "$data/yaml-quoting/corpus.json" "$work"
check "render's strings read back unchanged by kubectl and PyYAML" 0 $?
finish
