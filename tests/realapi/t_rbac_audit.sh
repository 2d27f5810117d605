#!/usr/bin/env bash
# scripts/lib/rbac-audit.py, offline, on audit lines written for it (tests/realapi/testdata): the
# oracle that holds every real-server suite's controller requests to deploy/'s RBAC must be able
# to fail, on each kind of request it judges.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
d=$top/tests/realapi/testdata
rbac=$top/deploy/base/rbac.yaml
a() { /usr/bin/python3 "$top/scripts/lib/rbac-audit.py" "$@" 2>&1; }
pass=0 fails=0
t() { # name, want exit code, want text (grep -E), rbac-audit args...
  local name=$1 rc=$2 re=$3 out got
  shift 3
  out=$(a "$@"); got=$?
  if [ "$got" = "$rc" ] && printf '%s\n' "$out" | grep -Eq -- "$re"; then pass=$((pass + 1)); echo "ok   $name"
  else fails=$((fails + 1)); echo "FAIL $name: exit $got (want $rc), output:"; printf '%s\n' "$out"; fi
}
t "allowed requests pass: verbs, a subresource, discovery and /version, any namespace; other clients and a cut line ignored" \
  0 '^rbac-audit: 5 requests by the controller, 5 kinds .*; 0 not allowed' "$rbac" "$d/rbac-audit.jsonl"
t "a verb the rule lacks fails, named with its count and the verb to add" \
  1 "update propertyoverrides \(propertyoverride.io\) \(2 times, e.g. /apis/propertyoverride.io/v1alpha1/namespaces/a/propertyoverrides/p\) is not allowed .*add the verb 'update'" \
  "$rbac" "$d/rbac-audit-denied.jsonl"
t "a subresource no rule names fails" 1 "patch propertyoverrides/finalize " "$rbac" "$d/rbac-audit-denied.jsonl"
t "a resource no rule names fails (cluster-wide Secrets)" 1 "list secrets .*not allowed" "$rbac" "$d/rbac-audit-denied.jsonl"
t "a non-resource path outside discovery and health fails" 1 "get /metrics .*no default role allows" "$rbac" "$d/rbac-audit-denied.jsonl"
t "a path only starting like a discovery one fails" 1 "get /apisx/evil " "$rbac" "$d/rbac-audit-denied.jsonl"
t "a watch logged when it starts and when it ends is one request (its auditID)" \
  1 "watch pods \(1 times" "$rbac" "$d/rbac-audit-denied.jsonl"
t "every denied kind is counted" 1 "; 6 not allowed" "$rbac" "$d/rbac-audit-denied.jsonl"
t "a log without a request of the controller's fails (a changed User-Agent)" \
  1 "no request with User-Agent propertyoverride/" "$rbac" /dev/null
t "... unless no controller ran (--none-ok)" 0 "no controller ran" --none-ok "$rbac" /dev/null
t "an RBAC file without roles is a usage error" 2 "no Role or ClusterRole" "$top/deploy/base/pdb.yaml" "$d/rbac-audit.jsonl"
echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
