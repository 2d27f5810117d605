#!/usr/bin/env bash
# Was ADV-KNOWN-FAILING (adv-trust; F1 fixed, enabled as tests/e2e/t_deep.sh): a ServiceDefaults holding no builtin/property-override entry,
# one of whose other extensions' arguments nest deeper than the controller's JSON parsers allow
# (json_tokener_new_ex(256)). The webhook never sees it (matchCondition holds-property-override):
# whoever may write any ServiceDefaults (an app team's GitOps) stores it. Expected: the controller
# goes on programming every other target, before and after a restart.
# Usage: PO_APISERVER=real bash tests/adv/t_deep_target.sh BUILD [depth]
. "$(dirname "$0")/../e2e/lib.sh"
build=$1
depth=${2:-300}
lc_start "$build" "$e2e_work" || exit 1
lc_controller || exit 1
lc_register_webhook Fail
po() { # name value target
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s, namespace: default}\nspec:\n  targetRef: {name: %s}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %s\n' "$1" "$3" "$2"
}
po victim 10 web | kubectl apply -f - >/dev/null
eventually "set up: victim programmed" 30 True cond victim Programmed status
deep=$(/usr/bin/python3 -c "import json,sys; d=int(sys.argv[1]); print('{\"a\":'*d + '1' + '}'*d)" "$depth")
out=$(printf '{"apiVersion":"consul.hashicorp.com/v1alpha1","kind":"ServiceDefaults","metadata":{"name":"deep","namespace":"default"},"spec":{"protocol":"http","envoyExtensions":[{"name":"builtin/lua","arguments":%s}]}}' "$deep" | kubectl create -f - 2>&1)
contains "the API server stores a ServiceDefaults nested $depth deep, not sent to the webhook" "$out" "created"
sleep 3
po other 12 other | kubectl apply -f - >/dev/null
eventually "controller up: another PropertyOverride is still programmed" 30 True cond other Programmed status
kill "$LC_CONTROLLER_PID"; wait "$LC_CONTROLLER_PID" 2>/dev/null
lc_controller >/dev/null 2>&1 || bad "the controller did not become ready after the restart"
lc_register_webhook Fail # the restarted controller's webhook port
po late 13 late | kubectl apply -f - >/dev/null
eventually "after a restart: a new PropertyOverride is programmed" 30 True cond late Programmed status
finish
