#!/usr/bin/env bash
# adv-27: memory running out in what t_cli_oom.sh does not run: preview (overrides applied to a
# config dump). Every 5th allocation (from the
# first) fails in turn (PO_OOM_STRIDE overrides); each run must give what a normal run gives or
# say "out of memory" with exit 2 and nothing on stdout: never a valid override judged invalid
# (preview: "unsupported target field type 'google.protobuf.Duration'" once a schema load failed),
# a partial JSON document, json-c's assertion, or a crash.
#   t_adv27_oom.sh BIN SHIM
. tests/cli/lib.sh
shim=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
. tests/cli/oom_lib.sh
stride=${PO_OOM_STRIDE:-5}
torture "preview consul" "$stride" preview -f "$data/preview/apply-order-po.yaml" --config-dump "$data/preview/consul-dump.json"
# validate -o json: not here yet. Its report no longer turns a failed allocation into a null count
# or json-c's assertion (before: 22 of 306 runs wrong), but json-c's own writer (0.16) drops the
# text its buffer could not grow for and says nothing: in its last allocations a comma goes
# (exit 1, a document that does not parse); json-c's tokener, to read it back, crashes when out of
# memory itself. PO_OOM_JSON=1 runs it (OOM_TO=900: what passes, before the writer).
if [ "${PO_OOM_JSON:-0}" = 1 ]; then
  OOM_SAME=json torture "validate -o json" "$stride" validate -o json -f examples/invalid/value-type-mismatch.yaml
fi
finish
