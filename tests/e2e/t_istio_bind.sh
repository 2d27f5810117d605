#!/usr/bin/env bash
# adv1 (issue 12): an EnvoyFilter the controller created is bound to itself by a second write
# (the propertyoverride.io/created annotation = its uid). When that write fails and the
# controller restarts before it succeeds, the restarted controller must still take the
# EnvoyFilter as its own (it carries this PropertyOverride's owner-uid and nothing else wrote
# it), not leave it as a foreign look-alike that stops every later edit from being programmed.
# Also: a tenant deleting our EnvoyFilter gets it back.
. "$(dirname "$0")/lib.sh"
PO_NS=shop PO_NAME=b
. "$(dirname "$0")/move_lib.sh"
move_start "$1"
created() { kubectl -n shop get envoyfilter propertyoverride-b -o json 2>/dev/null | jq -r '.metadata.annotations["propertyoverride.io/created"] // "none"'; }

# --- EnvoyFilter UPDATEs refused: the create succeeds, the binding write fails ---------------------
refuse UPDATE envoyfilters networking.istio.io
po '{group: "", kind: Service, name: web}' 1s
eventually "created, not yet bound" 30 "1s none" sh -c "echo \$(kubectl -n shop get envoyfilter propertyoverride-b -o json 2>/dev/null | jq -r '.spec.configPatches[0].patch.value.connect_timeout, (.metadata.annotations[\"propertyoverride.io/created\"] // \"none\")')"
# the create is recorded (its uid) in the PropertyOverride's status, which only the controller
# writes: what the restarted controller binds by (a crash in the instant between the create's
# answer and that status write is the one window left: docs/crd.md, ownership)
eventually "the unbound create recorded in the status" 30 "$(efj shop '{.metadata.uid}')" pov '{.status.created.uid}'
# --- the controller restarts before the binding write succeeds -----------------------------------
kill -9 "$LC_CONTROLLER_PID"
wait "$LC_CONTROLLER_PID" 2>/dev/null
allow
lc_controller --istio on || exit 1
po '{group: "", kind: Service, name: web}' 2s
eventually "after the restart: the edit is programmed into its own EnvoyFilter" 30 "2s" ct shop
eventually "after the restart: Programmed" 30 "True" pov '{.status.conditions[?(@.type=="Programmed")].status}'
check "after the restart: bound" test "$(created)" = "$(efj shop '{.metadata.uid}')"

# --- a tenant deletes our EnvoyFilter: it comes back ------------------------------------------------
kubectl -n shop delete envoyfilter propertyoverride-b >/dev/null
eventually "deleted by a tenant: back" 30 "2s" ct shop
finish
