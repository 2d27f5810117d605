#!/usr/bin/env bash
# Was ADV-KNOWN-FAILING (adv-trust, issue 21 item 1; F1 fixed, enabled as tests/e2e/t_deep.sh): a status.lastValid nested deeper than the
# controller's JSON parsers allow (json_tokener_new_ex(256): controller/kube/src/client.c,
# watch_parser.c, informer.c). status.lastValid.spec is x-kubernetes-preserve-unknown-fields and
# the status subresource is never sent to the webhook, so whoever may patch the status of ONE
# PropertyOverride (the documented threat of "How lastValid is trusted") stores it. Expected: the
# record is ignored (malformed) and every other PropertyOverride is still programmed, before and
# after a controller restart.
# Usage: PO_APISERVER=real bash tests/adv/t_deep_record.sh BUILD [depth]
. "$(dirname "$0")/../e2e/lib.sh"
build=$1
depth=${2:-300}
lc_start "$build" "$e2e_work" || exit 1
lc_controller || exit 1
po() { # name value target
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s, namespace: default}\nspec:\n  targetRef: {name: %s}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %s\n' "$1" "$3" "$2"
}
po victim 10 web | kubectl apply -f - >/dev/null
eventually "set up: victim programmed" 30 True cond victim Programmed status
# the attacker's own PropertyOverride, in any namespace the controller watches
po mine 11 mine | kubectl apply -f - >/dev/null
eventually "set up: mine programmed" 30 True cond mine Programmed status
deep=$(/usr/bin/python3 -c "import json,sys; d=int(sys.argv[1]); print('{\"a\":'*d + '1' + '}'*d)" "$depth")
out=$(kubectl patch propertyoverride mine --subresource=status --type=merge \
  -p "{\"status\":{\"lastValid\":{\"generation\":1,\"spec\":{\"targetRef\":{\"name\":\"mine\"},\"x\":$deep}}}}" 2>&1)
contains "the API server stores a record nested $depth deep" "$out" "patched"
sleep 3
# a new PropertyOverride of someone else, and a change of the victim
po other 12 other | kubectl apply -f - >/dev/null
eventually "controller up: another PropertyOverride is still programmed" 30 True cond other Programmed status
# the restart: the controller lists PropertyOverrides afresh
kill "$LC_CONTROLLER_PID"; wait "$LC_CONTROLLER_PID" 2>/dev/null
lc_controller >/dev/null 2>&1 || bad "the controller did not become ready after the restart"
po late 13 late | kubectl apply -f - >/dev/null
eventually "after a restart: a new PropertyOverride is programmed" 30 True cond late Programmed status
eventually "after a restart: ServiceDefaults late holds its entry" 30 "late@1" entries servicedefaults late
grep -c "depth\|nesting\|not a JSON object" "$LC_WORK/controller.log" | sed 's/^/controller log lines about the parse: /'
grep -m3 "depth\|nesting\|not a JSON" "$LC_WORK/controller.log" | cut -c1-400
finish
