#!/usr/bin/env bash
# status.lastValid is trusted only when it is what the controller wrote (issue 21). The webhook
# is not registered (removed, or bypassed): invalid specs are stored, and whoever may write the
# status subresource (`kubectl patch --subresource=status`) forges the record. The controller
# honours a record only when this process recorded it, or when the target holds what it wrote
# for it (Consul: the entry's marker generation and exact arguments; Istio: the EnvoyFilter's
# content and propertyoverride.io/generation); else the record is ignored, and the Programmed
# message and a LastValidMismatch Event say so. The issue's two cases: a forged record for a
# PropertyOverride whose only generation is invalid (150 stored, 33 forged) programs nothing; a
# record forged to generation 2 = 77 over a live generation 2 = 50 leaves 50, before and after a
# controller restart, on a ServiceDefaults and on an Istio EnvoyFilter. A legitimate record is
# still honoured after the restart (the last valid generation kept through an invalid one).
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
kubectl apply -f crds/istio/networking.istio.io_envoyfilters.yaml >/dev/null
lc_crds_ready envoyfilters.networking.istio.io || exit 1
kubectl create namespace istio-system >/dev/null
lc_controller --istio auto || exit 1
# no lc_register_webhook: nothing checks what is stored but the CRD's schema and the controller

po() { # name value [kind target]
  cat <<YAML
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: $1, namespace: default}
spec:
  targetRef: {kind: ${3:-ServiceDefaults}, name: ${4:-$1}}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection/max_ejection_percent
      value: $2
YAML
}
forge() { # name generation value [kind target]: status.lastValid through the status subresource
  local spec
  spec=$(po "$1" "$3" "${4:-ServiceDefaults}" "${5:-$1}" | kubectl create --dry-run=client -o json -f - | jq -c .spec)
  kubectl patch propertyoverride "$1" --subresource=status --type=merge \
    -p "{\"status\":{\"lastValid\":{\"generation\":$2,\"spec\":$spec}}}" >/dev/null
}
values() { # the max_ejection_percent of every entry of ServiceDefaults $1 ("" when none)
  kubectl get servicedefaults "$1" -o json 2>/dev/null | jq -r '[.spec.envoyExtensions // [] | .[] | .arguments.Patches[0].Value] | map(tostring) | join(" ")'
}
ef_value() { kubectl get envoyfilter "propertyoverride-$1" -o jsonpath='{.spec.configPatches[0].patch.value.outlier_detection.max_ejection_percent}' 2>/dev/null; }
ef_generation() { kubectl get envoyfilter "propertyoverride-$1" -o jsonpath='{.metadata.annotations.propertyoverride\.io/generation}' 2>/dev/null; }
msg() { cond "$1" Programmed message; }
says() { case "$(msg "$1")" in *"$2"*) echo yes ;; *) echo no ;; esac; } # name text
event_on() { # name reason: "yes" once an Event with that reason is about PropertyOverride name
  kubectl get events -o json | jq -r --arg n "$1" --arg r "$2" \
    'if any(.items[]; .involvedObject.kind == "PropertyOverride" and .involvedObject.name == $n and .reason == $r) then "yes" else "no" end'
}
no_value() { ! values "$1" | tr ' ' '\n' | grep -qx "$2"; } # target value
only_value() { [ "$(values "$1")" = "$2" ]; }

# --- 1. the only generation is invalid, the record forged valid ---------------------------------
po never 150 | kubectl apply -f - >/dev/null
eventually "never: generation 1 (150) is not accepted" 30 False cond never Accepted status
forge never 1 33
check "never: the forged record is stored" test "$(kubectl get pov never -o jsonpath='{.status.lastValid.spec.patches[0].value}')" = 33
eventually "never: the status says the record does not match" 30 yes says never \
  "status.lastValid (generation 1) does not match what this controller wrote to ServiceDefaults default/never (it holds no entry of this PropertyOverride): it is ignored"
check "never: the status does not say generation 1 is live" test "$(says never "still live")" = no
eventually "never: Event LastValidMismatch" 30 yes event_on never LastValidMismatch
check "never: 33 is never written (5 s)" holds 5 no_value never 33
echo "--- kubectl get pov never -o yaml (status) ---"
kubectl get pov never -o jsonpath='{.status.conditions[?(@.type=="Programmed")].message}{"\n"}'

# --- 2. generation 2 = 50 live, generation 3 invalid, the record forged to generation 2 = 77 ------
po live 10 | kubectl apply -f - >/dev/null
eventually "live: generation 1 programmed" 30 10 values live
po live 50 | kubectl apply -f - >/dev/null
eventually "live: generation 2 programmed" 30 50 values live
po live 150 | kubectl apply -f - >/dev/null
eventually "live: generation 3 invalid, generation 2 still live" 30 yes says live "generation 3 is invalid; generation 2 is still live"
forge live 2 77
eventually "live: the status says the record does not match" 30 yes says live \
  "status.lastValid (generation 2) does not match what this controller wrote to ServiceDefaults default/live (its entry of this PropertyOverride is generation 2 with other patches)"
check "live: the target keeps 50, never 77 (5 s)" holds 5 only_value live 50

# --- 3. a legitimate record, kept through an invalid generation ---------------------------------
po own 20 | kubectl apply -f - >/dev/null
eventually "own: generation 1 programmed" 30 20 values own
po own 150 | kubectl apply -f - >/dev/null
eventually "own: generation 2 invalid, generation 1 still live" 30 yes says own "generation 2 is invalid; generation 1 is still live"

# --- 4. Istio: the same forgeries against an EnvoyFilter ----------------------------------------
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: api, namespace: default}
spec: {selector: {app: api}, ports: [{port: 8080}]}
YAML
po ef 10 Service api | kubectl apply -f - >/dev/null
eventually "istio: generation 1 programmed" 30 10 ef_value ef
po ef 50 Service api | kubectl apply -f - >/dev/null
eventually "istio: generation 2 programmed" 30 "50 2" sh -c "echo \$(kubectl get envoyfilter propertyoverride-ef -o jsonpath='{.spec.configPatches[0].patch.value.outlier_detection.max_ejection_percent} {.metadata.annotations.propertyoverride\.io/generation}' 2>/dev/null)"
po ef 150 Service api | kubectl apply -f - >/dev/null
eventually "istio: generation 3 invalid, generation 2 live" 30 yes says ef "generation 3 is invalid; generation 2 is live in EnvoyFilter default/propertyoverride-ef"
forge ef 2 77 Service api
eventually "istio: the status says the record does not match, and what is live" 30 yes says ef \
  "EnvoyFilter default/propertyoverride-ef is left as it is (generation 2 is live in it); status.lastValid (generation 2) does not match what this controller wrote to EnvoyFilter default/propertyoverride-ef (it holds generation 2 of this PropertyOverride with other patches): it is ignored"
check "istio: the EnvoyFilter keeps 50, never 77 (5 s)" holds 5 sh -c "[ \"\$(kubectl get envoyfilter propertyoverride-ef -o jsonpath='{.spec.configPatches[0].patch.value.outlier_detection.max_ejection_percent}')\" = 50 ]"
po efnever 150 Service api | kubectl apply -f - >/dev/null
eventually "istio never: generation 1 (150) is not accepted" 30 False cond efnever Accepted status
forge efnever 1 33 Service api
eventually "istio never: the status says the record does not match" 30 yes says efnever "status.lastValid (generation 1) does not match"
check "istio never: no EnvoyFilter is created (3 s)" holds 3 sh -c '! kubectl get envoyfilter propertyoverride-efnever -o name >/dev/null 2>&1'

# --- 5. a restart: the controller's memory is gone, the proof is what it wrote -------------------
old=$LC_CONTROLLER_PID
kill -TERM "$old"
for ((i = 0; i < 400; i++)); do kill -0 "$old" 2>/dev/null || break; sleep 0.05; done
check "restart: the old controller exited" sh -c "! kill -0 $old 2>/dev/null"
lc_controller --istio auto || { bad "restart: the new controller did not start"; finish; exit 1; }
forge never 1 33 # again, with the new process
eventually "restart: never still says the record does not match" 30 yes says never "status.lastValid (generation 1) does not match"
check "restart: never: 33 is never written (5 s)" holds 5 no_value never 33
eventually "restart: live still says the record does not match" 30 yes says live "status.lastValid (generation 2) does not match"
check "restart: live: the target goes on holding 50, never 77 (5 s)" holds 5 only_value live 50
check "restart: own: its record is honoured, generation 1 (20) still live" test "$(values own)" = 20
eventually "restart: own: no mismatch said" 30 no says own "does not match"
check "restart: own: generation 1 still said live" test "$(says own "generation 1 is still live")" = yes
check "restart: istio: the EnvoyFilter keeps 50 at generation 2 (5 s)" holds 5 sh -c "[ \"\$(kubectl get envoyfilter propertyoverride-ef -o jsonpath='{.spec.configPatches[0].patch.value.outlier_detection.max_ejection_percent} {.metadata.annotations.propertyoverride\.io/generation}')\" = '50 2' ]"
eventually "restart: istio: the status says the record does not match" 30 yes says ef "status.lastValid (generation 2) does not match"

# --- 6. a record above metadata.generation -------------------------------------------------------
forge own 9 20
eventually "above: a record of generation 9 at metadata.generation 2 is ignored" 30 yes says own \
  "status.lastValid names generation 9, but metadata.generation is 2: it was not written by this controller and is ignored"
check "above: generation 1 stays live (the entry the controller wrote)" test "$(values own)" = 20

echo "--- kubectl get pov (conditions) ---"
for n in never live own ef efnever; do echo "$n: $(msg "$n")"; done
finish
