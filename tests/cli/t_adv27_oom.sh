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
# validate -o json: in t_jsonc_oom.sh (cli_jsonc_oom), since json-c is built with
# cmake/json-c-patches: its writer lost a comma, its tokener crashed, when memory ran out.
finish
