#!/usr/bin/env bash
# The %v of a float64 that Consul's decode errors print (mapstructure's "value: '...'"), ours
# against Go's own fmt (oracle go-fmt): the corpus of every disagreement ever found, then
# PO_GOFLOAT_CASES (default 20,000) values drawn from PO_GOFLOAT_SEED (default: the time).
#   t_go_float_v.sh GO_FLOAT_V_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../scripts/lib/oracle.sh"
gofmt=$(po_oracle go-fmt gofmt)
seed=${PO_GOFLOAT_SEED:-$(date +%s)}
n=${PO_GOFLOAT_CASES:-20000}
echo "seed $seed (PO_GOFLOAT_SEED), $n cases (PO_GOFLOAT_CASES)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{ grep -v '^#' "$here/corpus/go_float_v.txt"; "$gofmt" gen "$seed" "$n"; } | "$gofmt" v >"$work/cases"
"$1" "$work/cases"
