# Sourced by the tests that ask an oracle (tests/oracles/NAME/, built by scripts/build-oracles.sh).
#   po_oracle NAME PROGRAM    print the oracle program's path; when it is missing, exit 77
#                             (ctest: skipped), or 1 under PO_REQUIRE_REAL=1 (CI must ask it)
po_oracle() {
  local top deps path
  top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  deps="${PO_DEPS_DIR:-$top/.deps}"
  path="$deps/oracles/$1/$2"
  if [ -x "$path" ]; then
    printf '%s\n' "$path"
    return 0
  fi
  if [ "${PO_REQUIRE_REAL:-0}" = 1 ]; then
    echo "FAIL: oracle $1 missing ($path), and PO_REQUIRE_REAL=1: run scripts/build-oracles.sh (make setup does) and read its log in $deps/oracles/$1.build.log" >&2
    exit 1
  fi
  echo "skipped: oracle $1 missing ($path); scripts/build-oracles.sh builds it, PO_REQUIRE_REAL=1 makes this a failure"
  exit 77
}
