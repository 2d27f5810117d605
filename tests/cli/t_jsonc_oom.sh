#!/usr/bin/env bash
# json-c when memory runs out (cmake/json-c-patches): EVERY allocation of each run fails in turn
# (failalloc.c, preloaded), where json-c reads or writes: validate of a .json file (its tokener
# strdup()ed a key into NULL and crashed, or dropped a member: a wrong verdict), validate -o json
# and preview -o json (its writer lost a comma or a quote and printed a document that does not
# parse, exit 1; or a member left out of its tree), and validate of a .yaml file and render beside them (the same report and
# emission paths without json-c's reader). Each run gives exactly what a normal run gives, or
# nothing on stdout, exit 2 and "out of memory" on stderr (tests/cli/oom_lib.sh).
# validate .json: every N. The others every 4th N by default (about 3,000 runs in all, 3-6
# minutes on the shared machine); PO_OOM_STRIDE=1 runs every N of those too (about 9,500 runs).
#   t_jsonc_oom.sh BIN SHIM
. tests/cli/lib.sh
shim=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
. tests/cli/oom_lib.sh
stride=${PO_OOM_STRIDE:-4}
pv=$data/preview
torture "validate .json" 1 validate -f $data/list.json
torture "validate .yaml" "$stride" validate -f examples/invalid/value-type-mismatch.yaml
torture "validate -o json" "$stride" validate -o json -f examples/invalid/value-type-mismatch.yaml
torture "render" "$stride" render -f examples/valid/circuit-breakers.yaml
torture "preview -o json" "$stride" preview -f $pv/consul-po.yaml --config-dump $pv/consul-dump.json --datacenter dc1 -o json
# The report's own tree, every one of the last 400 allocations, on a preview with errors and
# resources not previewed: a put into the run's arena that failed left "not_previewed" out of the
# report (exit 1, allocation 3252 of 3253) until the run asked its arena before printing.
OOM_LAST=400 torture "preview -o json, the report's tree" 1 preview -f $pv/created-parent-po.yaml \
  --config-dump $pv/consul-dump.json --datacenter dc1 -o json
finish
