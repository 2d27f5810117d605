#!/usr/bin/env bash
# adv-trust probe (issue 21 item 4): the load of the 10 s retry cap against a webhook that stays
# unreachable. N targets each hold two PropertyOverrides' entries; one of each is deleted while the
# webhook is a dead port, so every target's write is judged and refused for good. Measured: the
# controller's API requests per minute (rest_client_requests_total), reconcile errors per
# minute, and whether an unrelated PropertyOverride is still programmed promptly meanwhile.
# Usage: PO_APISERVER=real bash tests/adv/t_retry_load.sh BUILD [N] [window-seconds]
. "$(dirname "$0")/../e2e/lib.sh"
build=$1; n=${2:-100}; window=${3:-60}
lc_start "$build" "$e2e_work" || exit 1
lc_controller || exit 1
lc_register_webhook Fail
po() { printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s, namespace: default}\nspec:\n  targetRef: {name: %s}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %s\n---\n' "$1" "$2" "$3"; }
for ((i = 0; i < n; i++)); do po "a$i" "t$i" 10; po "b$i" "t$i" 20; done | kubectl apply -f - >/dev/null
check "set up: all programmed" sh -c 'kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=180s >/dev/null'
dead=$(lc_free_port)
kubectl get validatingwebhookconfiguration propertyoverride -o json |
  jq --arg url "https://127.0.0.1:$dead/validate" '.webhooks[].clientConfig.url = $url' | kubectl replace -f - >/dev/null
sleep 3
for ((i = 0; i < n; i++)); do echo "a$i"; done | xargs kubectl delete propertyoverride --wait=false >/dev/null
sleep 30 # past the first backoffs
reqs() { curl -s "http://127.0.0.1:$LC_PROBE_PORT/metrics" | awk '/^rest_client_requests_total/ {s += $2} END {print s + 0}'; }
errs() { curl -s "http://127.0.0.1:$LC_PROBE_PORT/metrics" | awk '/^[a-z_]*reconcile_errors_total/ {s += $2} END {print s + 0}'; }
r0=$(reqs); e0=$(errs); ev0=$(kubectl get events -o json | jq '[.items[] | .count // 1] | add // 0')
t0=$SECONDS
po fresh fresh 30 | kubectl apply -f - >/dev/null
for ((i = 0; i < 300; i++)); do [ "$(cond fresh Programmed status)" = True ] && break; sleep 0.1; done
echo "figure: a new PropertyOverride programmed after $((SECONDS - t0)) s during the outage"
sleep $((window - (SECONDS - t0) > 0 ? window - (SECONDS - t0) : 0))
r1=$(reqs); e1=$(errs); ev1=$(kubectl get events -o json | jq '[.items[] | .count // 1] | add // 0')
echo "figure: $n stuck targets, ${window} s: $((r1 - r0)) API requests by the controller, $((e1 - e0)) reconcile errors, $((ev1 - ev0)) Events counted"
curl -s "http://127.0.0.1:$LC_PROBE_PORT/metrics" | grep "^rest_client_requests_total" | head -20
finish
