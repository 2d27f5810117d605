#!/usr/bin/env bash
# adv-trust probe (issue 21 item 4): edge cases of deploy/'s matchConditions on the real
# kube-apiserver with the controller down (its webhook URL a dead port, failurePolicy Fail).
# Usage: PO_APISERVER=real bash tests/adv/cel_edges.sh BUILD [big-N]
. "$(dirname "$0")/../e2e/lib.sh"
build=$1; bign=${2:-0}
lc_start "$build" "$e2e_work" || exit 1
api_pid=${lc_pids[-1]}
dead=$(lc_free_port)
vwc_of_render() { awk 'function out() { if (doc ~ /\nkind: ValidatingWebhookConfiguration\n/) printf "%s", doc } /^---$/ { out(); doc = "\n"; next } { doc = doc $0 "\n" } END { out() }' |
  kubectl create --dry-run=client -o json -f -; }
kubectl kustomize "$top/deploy" | vwc_of_render >"$e2e_work/vwc.json"
ca=$(base64 -w0 <"$LC_WORK/tls/ca.crt")
cpu() { awk '{print $14+$15}' /proc/$api_pid/stat; }
po='{"name":"builtin/property-override","arguments":{"Patches":[{"ResourceFilter":{"ResourceType":"cluster","TrafficDirection":"outbound"},"Op":"add","Path":"/outlier_detection/max_ejection_percent","Value":10}]}}'
sd() { jq -cn --arg n "$1" --argjson x "$2" '{apiVersion: "consul.hashicorp.com/v1alpha1", kind: "ServiceDefaults", metadata: {name: $n, namespace: "default"}, spec: ({protocol: "http"} + (if $x == "absent" then {} else {envoyExtensions: $x} end))}'; }
# before the configuration: objects as they may already be
sd withnull null | kubectl create -f - >/dev/null 2>"$e2e_work/err" && echo "created withnull" || echo "withnull refused: $(cat "$e2e_work/err")"
echo "stored withnull: $(kubectl get servicedefaults withnull -o json 2>/dev/null | jq -c .spec)"
sd num "[$po]" | kubectl create -f - >/dev/null
jq -c --arg url "https://127.0.0.1:$dead/validate" --arg ca "$ca" '.webhooks[] |= (.clientConfig = {url: $url, caBundle: $ca})' "$e2e_work/vwc.json" | kubectl create -f - >/dev/null
for ((i = 0; i < 100; i++)); do
  out=$(sd probe$i "[$po]" | kubectl create --dry-run=server -f - 2>&1); grep -q "127.0.0.1:$dead" <<<"$out" && break; sleep 0.1
done
# (a) null envoyExtensions
out=$(kubectl label servicedefaults withnull a=1 2>&1); echo "(a) label on withnull: $out"
out=$(kubectl patch servicedefaults withnull --type=merge -p '{"spec":{"envoyExtensions":null}}' 2>&1); echo "(a) patch to null: $out"
# (d) 10 -> 10.0 in our entry: CEL's 10 == 10.0, the C code's json_object_equal says not equal
out=$(kubectl patch servicedefaults num --type=json -p '[{"op":"replace","path":"/spec/envoyExtensions/0/arguments/Patches/0/Value","value":10.0}]' 2>&1); echo "(d) 10 -> 10.0: $out"
echo "(d) stored: $(kubectl get servicedefaults num -o json | jq -c .spec.envoyExtensions[0].arguments.Patches[0].Value)"
out=$(kubectl patch servicedefaults num --type=json -p '[{"op":"replace","path":"/spec/envoyExtensions/0/arguments/Patches/0/Value","value":9007199254740993}]' 2>&1); echo "(d) -> 2^53+1: $out"
kubectl delete validatingwebhookconfiguration propertyoverride >/dev/null
kubectl patch servicedefaults num --type=json -p '[{"op":"replace","path":"/spec/envoyExtensions/0/arguments/Patches/0/Value","value":9007199254740993}]' >/dev/null
echo "(d) stored (no webhook): $(kubectl get servicedefaults num -o json | jq -c .spec.envoyExtensions[0].arguments.Patches[0].Value)"
jq -c --arg url "https://127.0.0.1:$dead/validate" --arg ca "$ca" '.webhooks[] |= (.clientConfig = {url: $url, caBundle: $ca})' "$e2e_work/vwc.json" | kubectl create -f - >/dev/null
sleep 3
out=$(kubectl patch servicedefaults num --type=json -p '[{"op":"replace","path":"/spec/envoyExtensions/0/arguments/Patches/0/Value","value":9007199254740992.0}]' 2>&1); echo "(d) 2^53+1 -> 2^53 as a double: $out"
echo "(d) stored: $(kubectl get servicedefaults num -o json | jq -c .spec.envoyExtensions[0].arguments.Patches[0].Value)"
if [ "$bign" -gt 0 ]; then
  kubectl delete validatingwebhookconfiguration propertyoverride >/dev/null
  jq -cn --argjson p "$po" --argjson n "$bign" '{apiVersion: "consul.hashicorp.com/v1alpha1", kind: "ServiceDefaults", metadata: {name: "big", namespace: "default"}, spec: {protocol: "http", envoyExtensions: ([range($n) | {name: "x\(.)"}] + [$p])}}' >"$e2e_work/big.json"
  echo "big: $(wc -c <"$e2e_work/big.json") bytes"
  kubectl create -f "$e2e_work/big.json" >/dev/null 2>"$e2e_work/err" || echo "big refused: $(head -c 300 "$e2e_work/err")"
  jq -c --arg url "https://127.0.0.1:$dead/validate" --arg ca "$ca" '.webhooks[] |= (.clientConfig = {url: $url, caBundle: $ca})' "$e2e_work/vwc.json" | kubectl create -f - >/dev/null
  sleep 3
  for op in label insert; do
    c0=$(cpu); t0=$(date +%s.%N)
    if [ $op = label ]; then out=$(kubectl label servicedefaults big "l=$RANDOM" --overwrite --request-timeout=120s 2>&1 | head -c 300)
    else out=$(kubectl patch servicedefaults big --type=json --request-timeout=120s -p '[{"op":"add","path":"/spec/envoyExtensions/0","value":{"name":"y"}}]' 2>&1 | head -c 300); fi
    t1=$(date +%s.%N); c1=$(cpu)
    echo "figure: N=$bign $op: $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.2f", b-a}') s wall, apiserver cpu $(( (c1-c0)*10 )) ms: $out"
  done
fi
finish
