# Assertions for the end-to-end scripts (on top of scripts/lib/local-cluster.sh).
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# PO_APISERVER=real runs against the real kube-apiserver and etcd (scripts/build-kube.sh),
# local (the default) against tests/apiserver; fault injection exists only on the local one.
case ${PO_APISERVER:-local} in
  real) . "$top/scripts/lib/real-cluster.sh"; LC_AUDIT=${LC_AUDIT:-1} ;; # finish: lc_audit_rbac
  local) . "$top/scripts/lib/local-cluster.sh"; LC_KIND=local ;;
  *) echo "PO_APISERVER must be real or local, not '$PO_APISERVER'" >&2; exit 2 ;;
esac
# Envoy Gateway's and the Gateway API's CRDs (crds/envoygateway), installed and ready
# (lc_crds_ready). The Gateway API's groups (*.k8s.io) are protected on a real kube-apiserver: a CRD
# there needs the api-approved.kubernetes.io annotation; the minimal test copies say they are not
# approved.
eg_crds() {
  local f
  for f in "$top"/crds/envoygateway/*.yaml; do
    kubectl create --dry-run=client -o json -f "$f" |
      jq '.metadata.annotations["api-approved.kubernetes.io"] //= "unapproved, a minimal test copy (crds/envoygateway)"' |
      kubectl apply -f - >/dev/null || return 1
  done
  lc_crds_ready envoypatchpolicies.gateway.envoyproxy.io gateways.gateway.networking.k8s.io \
    httproutes.gateway.networking.k8s.io
}
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
# Waits until a command's output equals the wanted text (seconds of wall time, however slow
# each look is on a busy machine).
eventually() { # name, timeout, want, command...
  local name=$1 end=$((SECONDS + $2)) want=$3 got
  shift 3
  while :; do
    got=$("$@" 2>/dev/null)
    [ "$got" = "$want" ] && { ok "$name"; return 0; }
    [ "$SECONDS" -ge "$end" ] && break
    sleep 0.1
  done
  bad "$name: got '$got', want '$want'"
  return 1
}
# Succeeds when a command succeeds at every look for that many seconds (at least two looks).
holds() { # seconds, command...
  local end=$((SECONDS + $1)) n=0
  shift
  while :; do
    "$@" || return 1
    n=$((n + 1))
    [ "$SECONDS" -ge "$end" ] && [ $n -ge 2 ] && return 0
    sleep 0.25
  done
}
# Our entries in a target: "owner@generation" each (other extensions by name), in order.
entries() { # kind name [namespace]
  kubectl get "$1" "$2" -n "${3:-default}" -o json 2>/dev/null | jq -r '[.spec.envoyExtensions // [] | .[] |
    if (.arguments.PropertyOverride | type) == "object" then "\(.arguments.PropertyOverride.name)@\(.arguments.PropertyOverride.generation)"
    else .name end] | join(" ")'
}
cond() { # name type field [namespace]
  kubectl get propertyoverride "$1" -n "${4:-default}" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}" 2>/dev/null
}
finish() {
  # The controller's requests, all of them, within deploy/'s RBAC (real server only).
  if [ "$LC_KIND" = real ] && [ "${LC_AUDIT:-0}" = 1 ]; then
    check "every request the controller made is one deploy/'s RBAC allows (the audit log)" lc_audit_rbac
  fi
  echo "$e2e_pass passed, $e2e_fail failed"
  [ "$e2e_fail" = 0 ]
}

# ---- direct API access (the test drivers and the observer use it; kubectl is too slow for bulk) ----
lc_token() { kubectl config view --raw -o jsonpath='{.users[0].user.token}'; }
lc_curl() { # path [curl args...]
  local path=$1; shift
  curl -s --cacert "$LC_WORK/tls/ca.crt" -H "Authorization: Bearer $(lc_token)" "$@" "$LC_URL$path"
}
# The API server's current resourceVersion (a list's), as any client sees it.
lc_rv() { lc_curl '/apis/consul.hashicorp.com/v1alpha1/servicedefaults?limit=1' | jq -r .metadata.resourceVersion; }
metric() { # name{labels} -> its value on the controller's /metrics, 0 when absent
  curl -s "http://127.0.0.1:$LC_PROBE_PORT/metrics" | awk -v m="$1" '$1 == m {v = $2} END {print v == "" ? 0 : v}'
}

# ---- the never-regress observer (observer.py: what it judges is described there) ----
#   obs_start [flags]  before the run: starts it, returns once it has listed everything
#   obs_mark LABEL   a phase boundary at the current resourceVersion (figures are per phase)
#   obs_stop         it catches up to the current resourceVersion, judges every revision and
#                    prints the report; returns 0 when nothing regressed (call it in this
#                    shell, not in $(...): it waits for the observer, a child of this shell)
#   obs_figure LABEL FIELD   a phase's figure from the last report: deleted (target DELETED
#                    events), dropped_entries (live entries lost, by a delete or a write),
#                    dropping_writes (writes that dropped a live entry), target_writes, violations
obs_start() {
  obs_dir=$e2e_work/observer
  mkdir -p "$obs_dir"
  rm -f "$obs_dir/ready" "$obs_dir/stop" "$obs_dir/marks" "$obs_dir/summary.json"
  /usr/bin/python3 "$top/tests/e2e/observer.py" --url "$LC_URL" --token "$(lc_token)" --ca "$LC_WORK/tls/ca.crt" \
    --dir "$obs_dir" --validator "$LC_BUILD/propertyoverride" "$@" >"$obs_dir/report" 2>"$obs_dir/log" &
  obs_pid=$!
  lc_pids+=($obs_pid)
  local i
  for ((i = 0; i < 600; i++)); do
    [ -e "$obs_dir/ready" ] && return 0
    kill -0 "$obs_pid" 2>/dev/null || break
    sleep 0.05
  done
  bad "the observer did not start"; cat "$obs_dir/report" "$obs_dir/log" >&2
  return 1
}
obs_mark() { echo "$(lc_rv) $*" >>"$obs_dir/marks"; }
obs_stop() {
  local rc
  lc_rv >"$obs_dir/stop.tmp" && mv "$obs_dir/stop.tmp" "$obs_dir/stop"
  wait "$obs_pid"
  rc=$?
  cat "$obs_dir/report"
  [ $rc = 2 ] && cat "$obs_dir/log"
  return $rc
}
obs_figure() { jq -r --arg l "$1" --arg f "$2" '.phases[] | select(.label == $l) | .[$f]' "$obs_dir/summary.json"; }

# ---- the mutating webhooks, as deploy/ registers them (deploy/base/mutating-webhook.yaml), dialled
# at this run's controller (lc_controller's port) with the test CA; USER, when given, is the
# controller's username their not-the-controller conditions name (deploy/'s ServiceAccount's
# otherwise) ----
e2e_register_mutating() { # [controller username]
  local ca
  ca=$(base64 -w0 <"$LC_WORK/tls/ca.crt")
  kubectl create --dry-run=client -o json -f "$top/deploy/base/mutating-webhook.yaml" |
    jq --arg url "https://127.0.0.1:$LC_WEBHOOK_PORT/mutate" --arg ca "$ca" --arg user "${1:-}" \
      '.webhooks[].clientConfig = {url: $url, caBundle: $ca} |
       if $user == "" then . else .webhooks[].matchConditions |= map(if .name == "not-the-controller"
         then .expression = "request.userInfo.username != \u0027\($user)\u0027" else . end) end' |
    kubectl apply -f - >/dev/null
}
