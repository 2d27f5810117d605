#!/usr/bin/env bash
# --envoy-gateway=auto and --istio=auto when the API server cannot be asked (issue 27): a List
# that fails for another reason than a 404 (here 5xx answers, injected through the local server's
# /admin/faults, more than the client's retries) is no answer about the kind. Before, it was taken
# for "not served": Envoy Gateway turned off for the process's whole life after one transient
# error, and the log said "not programmed". Now: Envoy Gateway's detection fails the start, exit
# non-zero, naming the kind and the error and what to do; the same server answering again, the
# controller starts with Envoy Gateway on; Istio's says it could not tell and asks again every
# --istio-recheck-interval, programming EnvoyFilters once the server answers. Local API server
# only (fault injection).
. "$(dirname "$0")/lib.sh"
build=$1
[ "${PO_APISERVER:-local}" = local ] || { echo "local API server only (fault injection): skipped"; exit 77; }
lc_start "$build" "$e2e_work" || exit 1
eg_crds || exit 1
kubectl apply -f crds/istio/networking.istio.io_envoyfilters.yaml >/dev/null
lc_crds_ready envoyfilters.networking.istio.io || exit 1
faults() { lc_curl /admin/faults -X POST -H 'Content-Type: application/json' -d "$1" >/dev/null; }
log=$e2e_work/controller.log

# --- Envoy Gateway: every answer a 503 while it asks -> the start fails, saying why -----------------
faults '{"serverErrors":40,"serverErrorCode":503}'
if lc_controller --istio off --envoy-gateway auto 2>/dev/null; then
  bad "5xx at start: the controller started (Envoy Gateway detection took the error for 'not served')"
else
  wait "$LC_CONTROLLER_PID"
  rc=$?
  check "5xx at start: the controller exited non-zero" test "$rc" -ne 0
fi
contains "5xx at start: the error names the kind and what to do" "$(cat "$log")" \
  "--envoy-gateway=auto: could not tell whether the API server serves EnvoyPatchPolicies"
contains "5xx at start: the error carries the server's answer" "$(cat "$log")" "(HTTP 503: the server is currently unable"
check "5xx at start: never logged as not served" sh -c "! grep -q 'Envoy Gateway targets not programmed' '$log'"
faults '{"serverErrors":0}'

# --- the server answering: the same flags start, Envoy Gateway on -----------------------------------
: >"$log"
lc_controller --istio off --envoy-gateway auto || exit 1
contains "answered: Envoy Gateway targets programmed" "$(cat "$log")" "Envoy Gateway targets programmed"
kill "$LC_CONTROLLER_PID"; wait "$LC_CONTROLLER_PID" 2>/dev/null

# --- Istio: the first question unanswered -> "could not tell", asked again, then programmed ----------
: >"$log"
faults '{"serverErrors":6,"serverErrorCode":500}' # the List and the client's five retries
lc_controller --istio auto --istio-recheck-interval 1 --envoy-gateway off || exit 1
contains "Istio, 5xx at start: could not tell (not 'not served')" "$(cat "$log")" \
  "could not tell whether EnvoyFilters are served"
eventually "Istio, the server answering: programmed without a restart" 30 yes \
  sh -c "grep -q 'EnvoyFilters are served now' '$log' && echo yes"
check "Istio: istio_enabled gauge 1" test "$(metric propertyoverride_istio_enabled)" = 1
finish
