# Shared by the tests/cli scripts: run from the repository root, $1 the propertyoverride binary.
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
data=tests/cli/testdata

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

finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
