#!/usr/bin/env bash
# The kubectl oracle for how manifests are read: each cases/NAME.yaml goes through the real
# kubectl (`kubectl create --dry-run=client -o json`), and what kubectl made of it is
# golden/NAME.json:
#   {"exit": 0, "patches": <spec.patches as kubectl read them>, "debug": <spec.debug, if set>}
#   {"exit": N, "stderr": "<kubectl's message>"}
# Client-side: kubectl converts YAML to JSON itself (sigs.k8s.io/yaml) and prints the object it
# would send, so no server re-encodes it (the local API server's json-c would clamp integers
# beyond int64 to its limits; kubectl keeps them as float64). kubectl still asks the local API
# server for discovery (which kind is which resource) and the schema it validates against.
#
#   regen.sh BUILD_DIR            rewrite golden/ from kubectl
#   regen.sh BUILD_DIR --check    regenerate into a temporary directory and compare with golden/
#                                 (a live test: exit 0 same, 1 different, 77 no kubectl)
# test_yaml_oracle (run_yaml_oracle.c) compares the engine's YAML reader with golden/.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
build=$(cd "${1:?usage: regen.sh BUILD_DIR [--check]}" && pwd)
check=${2:-}
command -v kubectl >/dev/null || { echo "regen: no kubectl" >&2; exit 77; }
[ -x "$build/tests/apiserver/po-apiserver" ] || { echo "regen: no po-apiserver in $build" >&2; exit 77; }
work=$(mktemp -d)
cd "$top"
. scripts/lib/local-cluster.sh
trap 'lc_stop; rm -rf "$work"' EXIT
lc_start "$build" "$work/lc" >/dev/null || exit 1
out="$here/golden"
[ "$check" = --check ] && out="$work/golden"
mkdir -p "$out"
for f in "$here"/cases/*.yaml; do
  name=$(basename "$f" .yaml)
  # relative, so kubectl's messages name the file the same from any checkout
  (cd "$here" && kubectl create --dry-run=client -o json -f "cases/$name.yaml") >"$work/stdout" 2>"$work/stderr"
  rc=$?
  /usr/bin/python3 - "$rc" "$work/stdout" "$work/stderr" "$out/$name.json" <<'PY'
import json, sys
rc, out, err, dst = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
if rc == 0:
    spec = json.load(open(out))["spec"]
    g = {"exit": 0, "patches": spec["patches"]}
    if "debug" in spec:
        g["debug"] = spec["debug"]
else:
    g = {"exit": rc, "stderr": open(err).read().strip()}
with open(dst, "w") as fh:
    json.dump(g, fh, indent=1, sort_keys=True)
    fh.write("\n")
PY
done
if [ "$check" = --check ]; then
  if diff -r "$here/golden" "$out" >"$work/diff"; then
    echo "kubectl agrees with golden/ ($(ls "$out" | wc -l) cases)"
  else
    echo "kubectl disagrees with golden/:"; cat "$work/diff"; exit 1
  fi
fi
