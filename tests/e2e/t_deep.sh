#!/usr/bin/env bash
# Issue 21 F1 (the tester's tests/adv/t_deep_record.sh and t_deep_target.sh): objects nested
# thousands of levels deep do not stop the controller. One PropertyOverride's
# status.lastValid.spec (no schema there; the status subresource is never sent to the webhook)
# and one ServiceDefaults' builtin/lua arguments (no entry of ours: the webhook's matchConditions
# skip it), PO_DEEP_DEPTH levels (default 9,000). The API server decodes JSON to 10,000 levels, but
# kube-apiserver 1.32 stores a status patch whose managedFields (fieldsV1 repeats the path, a few
# levels more) then exceed that: at 9,990 its own list of PropertyOverrides fails ("exceeded max
# depth", kubectl's too), which no client can help; 9,000 leaves that margin. Before, the
# controller's parsers stopped at 256 levels: the running controller stopped programming, and
# after a restart it never became ready, nothing logged.
. "$(dirname "$0")/lib.sh"
build=$1
depth=${PO_DEEP_DEPTH:-9000}
lc_start "$build" "$e2e_work" || exit 1
lc_controller || exit 1
lc_register_webhook Fail
po() { # name value target
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s, namespace: default}\nspec:\n  targetRef: {name: %s}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %s\n' "$1" "$3" "$2"
}
po victim 10 web | kubectl apply -f - >/dev/null
eventually "set up: victim programmed" 60 True cond victim Programmed status
po mine 11 mine | kubectl apply -f - >/dev/null
eventually "set up: mine programmed" 60 True cond mine Programmed status
deep=$(/usr/bin/python3 -c "import sys; d=int(sys.argv[1]); print('{\"a\":'*d + '1' + '}'*d)" "$depth")
printf '{"status":{"lastValid":{"generation":1,"spec":{"targetRef":{"name":"mine"},"x":%s}}}}' "$deep" >"$e2e_work/record.json"
out=$(kubectl patch propertyoverride mine --subresource=status --type=merge --patch-file "$e2e_work/record.json" 2>&1)
contains "the API server stores a status.lastValid nested $depth levels below spec" "$out" "patched"
printf '{"apiVersion":"consul.hashicorp.com/v1alpha1","kind":"ServiceDefaults","metadata":{"name":"deep","namespace":"default"},"spec":{"protocol":"http","envoyExtensions":[{"name":"builtin/lua","arguments":%s}]}}' "$deep" >"$e2e_work/target.json"
out=$(kubectl create -f "$e2e_work/target.json" 2>&1)
contains "the API server stores a ServiceDefaults whose extension's arguments nest $depth levels" "$out" "created"
po other 12 other | kubectl apply -f - >/dev/null
eventually "controller up: another PropertyOverride is still programmed" 60 True cond other Programmed status
eventually "controller up: ServiceDefaults other holds its entry" 60 "other@1" entries servicedefaults other
po victim 14 web | kubectl apply -f - >/dev/null
eventually "controller up: a change of another PropertyOverride is programmed" 60 "victim@2" entries servicedefaults web
# the restart: every list afresh, the deep objects in them
kill "$LC_CONTROLLER_PID"
wait "$LC_CONTROLLER_PID" 2>/dev/null
if lc_controller >/dev/null 2>&1; then ok "after a restart: the controller becomes ready"; else bad "after a restart: the controller never became ready"; fi
lc_register_webhook Fail
po late 13 late | kubectl apply -f - >/dev/null
eventually "after a restart: a new PropertyOverride is programmed" 60 True cond late Programmed status
eventually "after a restart: ServiceDefaults late holds its entry" 60 "late@1" entries servicedefaults late
finish
