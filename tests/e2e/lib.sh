# Assertions for the end-to-end scripts (on top of scripts/lib/local-cluster.sh).
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$top/scripts/lib/local-cluster.sh"
e2e_pass=0 e2e_fail=0
e2e_work=$(mktemp -d /tmp/po-e2e.XXXXXX)
trap 'lc_stop; if [ $e2e_fail -gt 0 ]; then echo "logs in $e2e_work"; tail -30 "$e2e_work/controller.log"; else rm -rf "$e2e_work"; fi' EXIT

ok() { e2e_pass=$((e2e_pass + 1)); echo "ok   $*"; }
bad() { e2e_fail=$((e2e_fail + 1)); echo "FAIL $*"; }
check() { # name, command...
  local name=$1; shift
  if "$@"; then ok "$name"; else bad "$name"; fi
}
contains() { # name, haystack, needle
  case "$2" in *"$3"*) ok "$1" ;; *) bad "$1: does not contain '$3'"; printf '%s\n' "$2" | head -20 ;; esac
}
# Waits until a command's output equals the wanted text (seconds).
eventually() { # name, timeout, want, command...
  local name=$1 t=$2 want=$3 got i
  shift 3
  for ((i = 0; i < t * 10; i++)); do
    got=$("$@" 2>/dev/null)
    [ "$got" = "$want" ] && { ok "$name"; return 0; }
    sleep 0.1
  done
  bad "$name: got '$got', want '$want'"
  return 1
}
# Our entries in a target: "owner@generation" each, in order.
entries() { # kind name
  kubectl get "$1" "$2" -o json 2>/dev/null | python3 -c '
import json, sys
o = json.load(sys.stdin)
print(" ".join((e["arguments"]["PropertyOverride"]["name"] + "@" + str(e["arguments"]["PropertyOverride"]["generation"]))
               if "PropertyOverride" in e.get("arguments", {}) else e["name"] for e in o["spec"].get("envoyExtensions", [])))'
}
cond() { # name type field
  kubectl get propertyoverride "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}" 2>/dev/null
}
finish() {
  echo "$e2e_pass passed, $e2e_fail failed"
  [ "$e2e_fail" = 0 ]
}
