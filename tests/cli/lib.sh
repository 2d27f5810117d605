# Shared by the tests/cli scripts: run from the repository root, $1 the propertyoverride binary,
# $2 cli_yaml2json (t_render.sh). No interpreter: bash, awk, jq (the setup step installs it).
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
yaml2json=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
data=tests/cli/testdata

# What validate prints before its summary line when Consul objects (or only PropertyOverrides
# of Consul targets) were checked: the Envoy API snapshot that judged them, with the mesh release
# it stands for (text, and --output github). One place to change when the embedded snapshots do.
api_consul='Envoy API: go-control-plane envoy v1.32.4 (consul@1.22)'
api_consul_github='::notice title=Envoy API::go-control-plane envoy v1.32.4 (consul@1.22)'
api_istio='Envoy API: go-control-plane envoy v1.37.0 (istio@1.31 assumed)'
api_eg='Envoy API: go-control-plane envoy v1.37.0 (envoy-gateway@1.9)'
# every embedded snapshot, oldest first
apis_embedded='v1.32.4 v1.37.0 v1.40.0'
# explain's line naming the snapshot it describes, by default
api_name_default='ENVOY API:  go-control-plane envoy v1.32.4'

# check NAME WANT_RC GOT_RC [FILE EXPECTED_TEXT]: exit code, and the whole output when given.
check() {
  local name=$1 want=$2 got=$3
  if [ "$want" != "$got" ]; then
    echo "FAIL $name: exit $got, want $want"; [ $# -ge 4 ] && cat "$4"; fail=$((fail+1)); return
  fi
  if [ $# -ge 5 ] && [ "$(cat "$4")" != "$5" ]; then
    echo "FAIL $name: output differs"; echo "--- got"; cat "$4"; echo "--- want"; echo "$5"; fail=$((fail+1)); return
  fi
  pass=$((pass+1))
}

# contains NAME FILE TEXT: the output holds TEXT.
contains() {
  if grep -qF -- "$3" "$2"; then pass=$((pass+1)); else echo "FAIL $1: no '$3' in:"; cat "$2"; fail=$((fail+1)); fi
}

# golden NAME WANT_RC GOT_RC FILE GOLDEN: exit code, and the output byte for byte equal to the
# golden file. PO_UPDATE_GOLDEN=1 rewrites the golden file instead (review the diff).
golden() {
  local name=$1 want=$2 got=$3 out=$4 gold=$5
  if [ "${PO_UPDATE_GOLDEN:-0}" = 1 ]; then cp "$out" "$gold"; echo "updated $gold"; fi
  if [ "$want" != "$got" ]; then
    echo "FAIL $name: exit $got, want $want"; cat "$out"; fail=$((fail+1)); return
  fi
  if ! cmp -s "$out" "$gold"; then
    echo "FAIL $name: output differs from $gold:"; diff "$gold" "$out" | cat -A | head -40; fail=$((fail+1)); return
  fi
  pass=$((pass+1))
}

# jqcheck NAME FILE FILTER [jq args...]: FILTER over the JSON in FILE prints true.
jqcheck() {
  local name=$1 file=$2 filter=$3 got; shift 3
  got=$(jq -r "$@" "$filter" "$file" 2>&1)
  if [ "$got" = true ]; then pass=$((pass+1)); else echo "FAIL $name: jq '$filter' gave: $got"; fail=$((fail+1)); fi
}

finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
