#!/usr/bin/env bash
# adv-trust probe (issue 21 item 1): a status.lastValid of ~9,000 patches (the spec allows 100;
# status.lastValid.spec has no schema) on a VALID PropertyOverride, pointing at another
# ServiceDefaults: the index holds the PropertyOverride there by its record (keys.c), so that
# target's reconcile compiles the record (keep_last_valid). Each status patch (a changed value)
# makes it compile again. Measured: the controller's CPU and peak RSS per forged patch, and the
# time another PropertyOverride takes to be programmed meanwhile.
# Usage: PO_APISERVER=real bash tests/adv/t_huge_record.sh BUILD [patches] [rounds]
. "$(dirname "$0")/../e2e/lib.sh"
build=$1; np=${2:-9000}; rounds=${3:-5}
lc_start "$build" "$e2e_work" || exit 1
lc_controller || exit 1
po() { printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s, namespace: default}\nspec:\n  targetRef: {name: %s}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %s\n' "$1" "$2" "$3"; }
po p web 10 | kubectl apply -f - >/dev/null
po q other 10 | kubectl apply -f - >/dev/null
eventually "set up: p programmed" 30 True cond p Programmed status
eventually "set up: q programmed" 30 True cond q Programmed status
pid=$LC_CONTROLLER_PID
cpu() { awk '{print $14+$15}' /proc/$pid/stat; }
hwm() { awk '/VmHWM/ {print $2}' /proc/$pid/status; }
echo "controller before: cpu $(( $(cpu) * 10 )) ms, VmHWM $(hwm) kB"
for ((r = 1; r <= rounds; r++)); do
  jq -cn --argjson n "$np" --argjson r "$r" '{status: {lastValid: {generation: 1, spec: {targetRef: {name: "other"}, patches: [range($n) | {resourceFilter: {resourceType: "cluster", trafficDirection: "outbound"}, op: "add", path: "/outlier_detection/max_ejection_percent", value: ((. + $r) % 100)}]}}}}' >"$e2e_work/patch.json"
  c0=$(cpu)
  kubectl patch propertyoverride p --subresource=status --type=merge --patch-file "$e2e_work/patch.json" >/dev/null 2>"$e2e_work/err" || { echo "patch refused: $(head -c 300 "$e2e_work/err")"; break; }
  sleep 5
  echo "figure: round $r ($(wc -c <"$e2e_work/patch.json") bytes, $np patches): controller cpu +$(( ($(cpu) - c0) * 10 )) ms, VmHWM $(hwm) kB"
done
t0=$SECONDS
kubectl patch propertyoverride q --type=json -p '[{"op":"replace","path":"/spec/patches/0/value","value":11}]' >/dev/null
eventually "another PropertyOverride's change is programmed meanwhile" 30 "q@2" entries servicedefaults other
echo "figure: q's generation 2 programmed in $((SECONDS - t0)) s"
echo "p: $(cond p Programmed message | head -c 300)"
finish
