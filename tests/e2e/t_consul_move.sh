#!/usr/bin/env bash
# adv1 (issue 12): a valid PropertyOverride moved from a Consul target keeps its entry there
# until its patches are written where it points now, as one moved from an Istio target keeps its
# EnvoyFilter (t_istio_move.sh). A ValidatingWebhookConfiguration refusing every CREATE of a kind
# (a dead URL, failurePolicy Fail) makes the new target's create fail: ServiceDefaults ->
# Service (EnvoyFilter creates refused) and ServiceDefaults web -> other (ServiceDefaults creates
# refused): the old entry must stay. Then h-move: moved web -> api and deleted while web's
# reconcile cannot remove the old entry (web's updates refused): the finalizer stays until it is
# gone (released, the entry would name a PropertyOverride that no longer exists: kept for good).
. "$(dirname "$0")/lib.sh"
PO_NS=platform PO_NAME=m
. "$(dirname "$0")/move_lib.sh"
move_start "$1" --allow-proxydefaults-from platform
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: web, namespace: platform}
spec: {protocol: http}
YAML
# --- ServiceDefaults -> Service, the EnvoyFilter's create refused: the entry stays ----------
po '{group: consul.hashicorp.com, kind: ServiceDefaults, name: web}' 1s
eventually "ServiceDefaults: entry written" 30 "m@1" sd_entry
refuse_creates envoyfilters networking.istio.io
po '{group: "", kind: Service, name: web}' 2s
programmed_false "ServiceDefaults -> Service: the create fails (status says so)"
check "ServiceDefaults -> Service, create refused: the ServiceDefaults entry is still there" holds 3 is sd_entry m@1
allow_creates
eventually "ServiceDefaults -> Service: written once creates work" 30 "2s" ct platform

# --- the same between two Consul targets: ServiceDefaults web -> other, other's create refused -------
po '{group: consul.hashicorp.com, kind: ServiceDefaults, name: web}' 3s
eventually "ServiceDefaults web: entry" 30 "m@3" sd_entry
refuse_creates servicedefaults consul.hashicorp.com
po '{group: consul.hashicorp.com, kind: ServiceDefaults, name: other}' 4s
programmed_false "web -> other: the create fails (status says so)"
check "web -> other, create refused: the entry in web is still there" holds 3 is sd_entry m@3
allow_creates
eventually "web -> other: written once creates work" 30 "m@4" entries servicedefaults other platform

# --- moved web -> api, then deleted before web's reconcile removed the old entry -------------------
# web's updates refused (a webhook selecting its label): its reconcile cannot remove the entry
refuse_held_updates() { refuse UPDATE servicedefaults consul.hashicorp.com hold=yes; }
kubectl -n platform label servicedefaults web hold=yes >/dev/null
po '{group: consul.hashicorp.com, kind: ServiceDefaults, name: web}' 5s
eventually "back to web: entry" 30 "m@5" sd_entry
refuse_held_updates
po '{group: consul.hashicorp.com, kind: ServiceDefaults, name: api}' 6s
eventually "web -> api: written in api" 30 "m@6" entries servicedefaults api platform
eventually "web -> api: recorded (status.lastValid names api's generation)" 30 "6" pov '{.status.lastValid.generation}'
check "web -> api, web's updates refused: the old entry is still in web" holds 3 is sd_entry m@5
kubectl -n platform delete propertyoverride "$PO_NAME" --wait=false >/dev/null
eventually "deleted: its entry in api removed" 30 "" entries servicedefaults api platform
check "deleted while web holds its old entry: the finalizer stays" holds 6 is pov '{.metadata.name}' "$PO_NAME"
allow
eventually "web's updates allowed: its old entry removed" 60 "" sd_entry
eventually "then the finalizer goes" 60 "" pov '{.metadata.name}'

# --- the same across a restart: deleted while the controller is down, the new process learns from
# its list of targets that web holds the old entry
po '{group: consul.hashicorp.com, kind: ServiceDefaults, name: web}' 7s
eventually "again: entry in web" 30 "m@1" sd_entry
refuse_held_updates
po '{group: consul.hashicorp.com, kind: ServiceDefaults, name: api}' 8s
eventually "again web -> api: written in api" 30 "m@2" entries servicedefaults api platform
eventually "again web -> api: recorded" 30 "2" pov '{.status.lastValid.generation}'
kill -9 "$LC_CONTROLLER_PID"
for ((i = 0; i < 200; i++)); do kill -0 "$LC_CONTROLLER_PID" 2>/dev/null || break; sleep 0.05; done
kubectl -n platform delete propertyoverride "$PO_NAME" --wait=false >/dev/null
lc_controller --istio on --allow-proxydefaults-from platform --leader-elect=false || exit 1
eventually "restarted: its entry in api removed" 30 "" entries servicedefaults api platform
check "restarted, web holding its old entry: the finalizer stays" holds 6 is pov '{.metadata.name}' "$PO_NAME"
allow
eventually "restarted, web's updates allowed: its old entry removed" 60 "" sd_entry
eventually "restarted: then the finalizer goes" 60 "" pov '{.metadata.name}'
# --- adv-s14: a tenant's own ServiceDefaults (namespace evil) carrying an entry whose marker names
# m (its name and uid, bound to the tenant's object's uid) without m's namespace: evil/m, which does
# not exist, someone else's (ForeignEntry). Updated by the tenant every 0.3 s (each update an event
# the index parses), it must not hold m's deletion. A guard, not the hole's proof: at kubectl's pace
# the tenant loses the race against evil/x's own reconcile (which forgets the look-alike) and this
# passes before the fix too; test_reconcile's test_fake_holder_in_another_namespace_holds_no_release
# is the one that fails there
po '{group: consul.hashicorp.com, kind: ServiceDefaults, name: web}' 9s
eventually "tenant: entry in web" 30 "m@1" sd_entry
kubectl create namespace evil >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: x, namespace: evil}
spec: {protocol: http}
YAML
xuid=$(kubectl -n evil get servicedefaults x -o jsonpath='{.metadata.uid}')
muid=$(pov '{.metadata.uid}')
kubectl -n evil patch servicedefaults x --type merge -p "{\"spec\":{\"envoyExtensions\":[{\"name\":\"builtin/property-override\",\"arguments\":{\"PropertyOverride\":{\"name\":\"$PO_NAME\",\"generation\":1,\"uid\":\"$muid\",\"targetUID\":\"$xuid\"},\"Patches\":[]}}]}}" >/dev/null
( for ((i = 0; i < 200; i++)); do kubectl -n evil label servicedefaults x --overwrite "tick=$i" >/dev/null 2>&1; sleep 0.3; done ) &
ticker=$!
kubectl -n platform delete propertyoverride "$PO_NAME" --wait=false >/dev/null
eventually "tenant's look-alike in evil/x, updated every 0.3 s: m's entry in web removed" 30 "" sd_entry
eventually "tenant's look-alike in evil/x: the finalizer goes all the same" 30 "" pov '{.metadata.name}'
kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null
check "the tenant's entry is left as it is (not ours)" holds 1 is entries servicedefaults x evil "m@1"
finish
