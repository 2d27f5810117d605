#!/usr/bin/env bash
# ADV-KNOWN-FAILING probe (adv-trust): cost of targets.validate.propertyoverride.io's matchConditions
# on the real kube-apiserver, with the controller down (the webhook URL a dead port), for a
# ServiceDefaults whose envoyExtensions list is N entries long. Every UPDATE of such an object
# (a label, a finalizer removal, consul-k8s's own metadata writes) evaluates the conditions.
# Usage: PO_APISERVER=real bash tests/adv/cel_cost.sh BUILD [N...]
. "$(dirname "$0")/../e2e/lib.sh"
build=$1; shift
sizes=("${@:-5000 20000 40000}")
lc_start "$build" "$e2e_work" || exit 1
api_pid=${lc_pids[-1]}
dead=$(lc_free_port)
vwc_of_render() { awk 'function out() { if (doc ~ /\nkind: ValidatingWebhookConfiguration\n/) printf "%s", doc } /^---$/ { out(); doc = "\n"; next } { doc = doc $0 "\n" } END { out() }' |
  kubectl create --dry-run=client -o json -f -; }
kubectl kustomize "$top/deploy" | vwc_of_render >"$e2e_work/vwc.json"
ca=$(base64 -w0 <"$LC_WORK/tls/ca.crt")
cpu() { awk '{print $14+$15}' /proc/$api_pid/stat; } # clock ticks (1/100 s)
po='{"name":"builtin/property-override","arguments":{"Patches":[{"ResourceFilter":{"ResourceType":"cluster","TrafficDirection":"outbound"},"Op":"add","Path":"/outlier_detection/max_ejection_percent","Value":10}]}}'
for n in ${sizes[@]}; do
  for withpo in ${PO_ADV_WITHPO:-no yes}; do
    name="big-$n-$withpo"
    kubectl delete validatingwebhookconfiguration propertyoverride --ignore-not-found >/dev/null
    if [ $withpo = yes ]; then p="$po"; else p=null; fi
    jq -cn --arg nm "$name" --argjson p "$p" --argjson n "$n" '{apiVersion: "consul.hashicorp.com/v1alpha1", kind: "ServiceDefaults", metadata: {name: $nm, namespace: "default"}, spec: {protocol: "http", envoyExtensions: ([range($n) | {name: "x\(.)"}] + (if $p then [$p] else [] end))}}' >"$e2e_work/$name.json"
    echo "object bytes: $(wc -c <"$e2e_work/$name.json")"
    kubectl create -f "$e2e_work/$name.json" >/dev/null 2>"$e2e_work/err" || { echo "create $name failed: $(head -c 300 "$e2e_work/err")"; continue; }
    for vwc in absent present; do
      if [ $vwc = present ]; then
        jq -c --arg url "https://127.0.0.1:$dead/validate" --arg ca "$ca" '.webhooks[] |= (.clientConfig = {url: $url, caBundle: $ca})' "$e2e_work/vwc.json" | kubectl create -f - >/dev/null
        sleep 3
      fi
      c0=$(cpu); t0=$(date +%s.%N)
      out=$(kubectl label servicedefaults "$name" "try=$vwc" --overwrite 2>&1 | head -c 400)
      t1=$(date +%s.%N); c1=$(cpu)
      echo "figure: N=$n po-entry=$withpo vwc=$vwc label update: $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.2f", b-a}') s wall, apiserver cpu $(( (c1-c0)*10 )) ms: $out"
      # an entry-list change that keeps ours (another extension appended): one filter each side
      c0=$(cpu); t0=$(date +%s.%N)
      out=$(kubectl patch servicedefaults "$name" --type=json -p '[{"op":"add","path":"/spec/envoyExtensions/0","value":{"name":"y"}}]' 2>&1 | head -c 400)
      t1=$(date +%s.%N); c1=$(cpu)
      echo "figure: N=$n po-entry=$withpo vwc=$vwc insert-other-extension: $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.2f", b-a}') s wall, apiserver cpu $(( (c1-c0)*10 )) ms: $out"
    done
    kubectl delete validatingwebhookconfiguration propertyoverride --ignore-not-found >/dev/null
    kubectl delete servicedefaults "$name" --wait=false >/dev/null 2>&1
  done
done
finish
