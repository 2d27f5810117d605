#!/usr/bin/env bash
# Was an ADV-KNOWN-FAILING probe (adv-trust, issue 21 item 4; F2 fixed, unit test test_adv_webhook_413_is_not_unreachable): the 10 s retry cap times the cost of
# targets.validate.propertyoverride.io's matchConditions. A ServiceDefaults holding N other
# extensions (an app team's) and two PropertyOverrides' entries; one PropertyOverride is deleted
# while the webhook is unreachable: the controller's write (entries changed) is evaluated by the
# conditions (three walks of the list) and refused, then retried every 10 s forever. Measured:
# the kube-apiserver's CPU seconds per minute in that state, against the same minute idle.
# Seen at N=50,000 (adv-trust, 2 loaded cores): the set-up never completes: our own webhook answers
# the controller's first write 413 (the review is over its memory budget), which the API server
# words "failed calling webhook ... 413", so the controller retries every 10 s forever (log:
# retry_in_ms 10000 from the 12th try on); the "idle" minute is that loop: 23 s of kube-apiserver
# CPU in 60 s for one object (31.7 s once the webhook is a dead port as well).
# Usage: PO_APISERVER=real bash tests/adv/t_retry_cel_burn.sh BUILD [N]
. "$(dirname "$0")/../e2e/lib.sh"
build=$1; n=${2:-50000}
lc_start "$build" "$e2e_work" || exit 1
api_pid=${lc_pids[-1]}
lc_controller || exit 1
lc_register_webhook Fail
cpu() { awk '{print $14+$15}' /proc/$api_pid/stat; }
jq -cn --argjson n "$n" '{apiVersion: "consul.hashicorp.com/v1alpha1", kind: "ServiceDefaults", metadata: {name: "big", namespace: "default"}, spec: {protocol: "http", envoyExtensions: [range($n) | {name: "x\(.)"}]}}' >"$e2e_work/big.json"
kubectl create -f "$e2e_work/big.json" >/dev/null || exit 1
po() { printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s, namespace: default}\nspec:\n  targetRef: {name: big}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %s\n---\n' "$1" "$2"; }
{ po a 10; po b 20; } | kubectl apply -f - >/dev/null
check "set up: both programmed" sh -c 'kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=300s >/dev/null'
sleep 5
c0=$(cpu); sleep 60; c1=$(cpu)
echo "figure: N=$n, idle: kube-apiserver cpu $(( (c1 - c0) * 10 )) ms in 60 s"
dead=$(lc_free_port)
kubectl get validatingwebhookconfiguration propertyoverride -o json |
  jq --arg url "https://127.0.0.1:$dead/validate" '.webhooks[].clientConfig.url = $url' | kubectl replace -f - >/dev/null
sleep 3
kubectl delete propertyoverride a --wait=false >/dev/null
sleep 30
e0=$(grep -c '"reconcile failed' "$LC_WORK/controller.log"); c0=$(cpu); sleep 60; c1=$(cpu); e1=$(grep -c '"reconcile failed' "$LC_WORK/controller.log")
echo "figure: N=$n, controller stuck on one object (webhook unreachable): kube-apiserver cpu $(( (c1 - c0) * 10 )) ms in 60 s, $((e1 - e0)) failed reconciles"
grep -m1 '"reconcile failed' "$LC_WORK/controller.log" | cut -c1-400
check "one stuck object costs the API server under 10 s of CPU a minute" test $(( (c1 - c0) * 10 )) -lt 10000
finish
