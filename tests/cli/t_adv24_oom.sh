#!/usr/bin/env bash
# adv-24: memory running out in upgrade-check (issue 24), which t_cli_oom.sh and t_adv27_oom.sh do
# not run. Every 3rd allocation of an EnvoyPatchPolicy's check and every 11th of an EnvoyFilter's
# (from the first; PO_OOM_STRIDE overrides both) fails in turn; each run must give what a normal
# run gives or say "out of memory" with exit 2 and nothing on stdout.
# Before: a value judged by both releases' Envoy rules (an EnvoyFilter's Any, an
# EnvoyPatchPolicy's value) was written as JSON by po_Value_ToJson, which passed json-c's NULL
# (its writer's buffer not grown) to strlen: SIGSEGV, 8 of 4116 runs.
#   t_adv24_oom.sh BIN SHIM
. tests/cli/lib.sh
shim=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
. tests/cli/oom_lib.sh
u=$data/upgrade
torture "upgrade-check EnvoyPatchPolicy" "${PO_OOM_STRIDE:-3}" upgrade-check --from envoy-gateway@1.8 --to envoy-gateway@1.9 -f "$u/epp-moved.yaml"
torture "upgrade-check EnvoyFilter" "${PO_OOM_STRIDE:-11}" upgrade-check --from istio@1.26 --to istio@1.28 -f "$u/ef-removed.yaml"
finish
