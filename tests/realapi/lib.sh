# Assertions for the real-API-server checks, and the harness chosen by PO_APISERVER (real by
# default here; `local` runs the same checks on tests/apiserver, to see where the two differ).
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top"
case ${PO_APISERVER:-real} in
local) . scripts/lib/local-cluster.sh; LC_KIND=local ;;
real)
  . scripts/lib/real-cluster.sh
  LC_AUDIT=${LC_AUDIT:-1} # finish: lc_audit_rbac
  lc_have_real || lc_real_missing ;;
*) echo "PO_APISERVER must be real or local, not '$PO_APISERVER'" >&2; exit 2 ;;
esac
command -v jq >/dev/null || { echo "SKIP: jq is needed (scripts/setup.sh installs it)"; exit 77; }

ra_pass=0 ra_fail=0
ra_work=$(mktemp -d /tmp/po-realapi.XXXXXX)
trap 'lc_stop; if [ $ra_fail -gt 0 ]; then echo "logs in $ra_work"; tail -20 "$ra_work/controller.log" 2>/dev/null; else rm -rf "$ra_work"; fi' EXIT

ok() { ra_pass=$((ra_pass + 1)); echo "ok   $*"; }
bad() { ra_fail=$((ra_fail + 1)); echo "FAIL $*"; }
check() { # name, command...
  local name=$1; shift
  if "$@"; then ok "$name"; else bad "$name"; fi
}
contains() { # name, haystack, needle
  case "$2" in *"$3"*) ok "$1" ;; *) bad "$1: does not contain '$3'"; printf '%s\n' "$2" | head -10 | sed 's/^/     | /' ;; esac
}
equals() { # name, got, want
  if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi
}
# Polls until a command's output equals the wanted text (seconds).
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
# The values of `# KEY: text` in an example's comment header (continuation lines, `#   ...`,
# joined with a space), one per line: the format examples/README.md describes.
header() { # file key
  awk -v key="$2" '
    !/^#/ { exit }
    /^#   / && cur { t = substr($0, 5); gsub(/^[ \t]+|[ \t]+$/, "", t); vals[n] = vals[n] " " t; next }
    { cur = 0; line = substr($0, 2); sub(/^ /, "", line); i = index(line, ": ")
      if (i && substr(line, 1, i - 1) == key) { t = substr(line, i + 2); gsub(/[ \t]+$/, "", t); vals[++n] = t; cur = 1 } }
    END { for (i = 1; i <= n; i++) print vals[i] }' "$1"
}
# Our entries in a target: "owner@generation" each (other extensions by name), in order.
entries() { # kind name
  kubectl get "$1" "$2" -o json 2>/dev/null | jq -r '[.spec.envoyExtensions // [] | .[] |
    if (.arguments.PropertyOverride | type) == "object"
    then "\(.arguments.PropertyOverride.name)@\(.arguments.PropertyOverride.generation)" else .name end] | join(" ")'
}
cond() { # name type field
  kubectl get propertyoverride "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}" 2>/dev/null
}
finish() {
  if [ "$LC_KIND" = real ] && [ "${LC_AUDIT:-0}" = 1 ]; then
    if lc_audit_rbac; then ok "every request the controller made is one deploy/'s RBAC allows (the audit log)"
    else bad "the controller made a request deploy/'s RBAC does not allow (the audit log)"; fi
  fi
  echo "$ra_pass passed, $ra_fail failed (${LC_KIND} API server)"
  [ "$ra_fail" = 0 ]
}
