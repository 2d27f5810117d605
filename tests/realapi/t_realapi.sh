#!/usr/bin/env bash
# The CRD and the controller on the real kube-apiserver and etcd (scripts/lib/real-cluster.sh):
#  1. crds/ installed with kubectl: Established, structural, served under its short name
#  2. the API server alone (no webhook): every invalid example marked `schema` is refused with
#     its schema-message (CEL rules, enums, anyOf, unknown fields), client-side and server-side;
#     every one marked only `webhook` passes the CRD, as its header says; defaults are filled in
#  3. ValidatingAdmissionPolicy and the webhook's matchConditions are evaluated
#  4. with the controller and its webhook: every valid example is admitted and Programmed, every
#     invalid one refused as its header says (schema first, then the webhook's texts)
#  5. printer columns: each cell of the server's Table is the column's jsonPath value
#  6. server-side apply: managedFields, a conflict between managers, --force-conflicts
#  7. a restart of the controller deletes nothing and rewrites nothing
#  8. deleting a PropertyOverride (finalizer) removes only its entry
#  9. a JSON Patch carrying the resourceVersion read is refused 409 once the object moved on, and
#     applies by index while it has not (the controller's target updates, po_Consul_Delta)
# usage: t_realapi.sh BUILD_DIR   (PO_APISERVER=local runs the same checks on tests/apiserver)
. "$(dirname "$0")/lib.sh"
build=$1
[ -x "$build/propertyoverride" ] || { echo "no $build/propertyoverride: build it first"; exit 1; }

lc_start "$build" "$ra_work" || { bad "the API server started"; finish; exit 1; }
ok "$LC_KIND API server at $LC_URL (started in ${LC_START_SECONDS:-?} s)"

# --- 1. the CRDs ---------------------------------------------------------------------------------
crd=propertyoverrides.propertyoverride.io
equals "the CRD is Established" \
  "$(kubectl get crd $crd -o jsonpath='{.status.conditions[?(@.type=="Established")].status}')" True
equals "its schema is structural (no NonStructuralSchema condition)" \
  "$(kubectl get crd $crd -o jsonpath='{.status.conditions[?(@.type=="NonStructuralSchema")].status}')" ""
for c in servicedefaults.consul.hashicorp.com proxydefaults.consul.hashicorp.com; do
  equals "$c is Established" "$(kubectl get crd $c -o jsonpath='{.status.conditions[?(@.type=="Established")].status}')" True
done
contains "short name pov is served" "$(kubectl api-resources --api-group=propertyoverride.io 2>&1)" "pov"
# (lc_start returned once the OpenAPI document describes the kind: lc_crds_ready, which the server
# publishes some time after Established; explain says "couldn't find resource" until then.)
contains "kubectl explain reads the published schema" \
  "$(kubectl explain propertyoverride.spec.patches.resourceFilter 2>&1)" "trafficDirection"

# The wait itself (scripts/lib/ready.sh): CRDs created now, each used by kubectl the moment
# lc_crds_ready returns: explain (OpenAPI), get (discovery), a server-side dry run (served). Three
# rounds of three kinds, so a helper that returned early would show here, not once in a CI run.
ready_crd() { # group kind
  local plural
  plural=$(tr '[:upper:]' '[:lower:]' <<<"$2")s
  cat <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: $plural.$1}
spec:
  group: $1
  scope: Namespaced
  names: {plural: $plural, singular: $(tr '[:upper:]' '[:lower:]' <<<"$2"), kind: $2, listKind: ${2}List}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              description: The $2 probe's spec.
              properties: {readyField: {type: string, description: lc_crds_ready probe field}}
YAML
}
for round in 1 2 3; do
  crds=()
  for k in Alpha Beta Gamma; do
    ready_crd "r$round.ready.test" "$k$round" | kubectl apply -f - >/dev/null
    crds+=("$(tr '[:upper:]' '[:lower:]' <<<"$k$round")s.r$round.ready.test")
  done
  check "round $round: lc_crds_ready returns for three new CRDs" lc_crds_ready "${crds[@]}"
  for k in Alpha Beta Gamma; do
    kind=$(tr '[:upper:]' '[:lower:]' <<<"$k$round")
    contains "round $round: kubectl explain $kind at once" "$(kubectl explain "$kind.spec" 2>&1)" "readyField"
    contains "round $round: kubectl get $kind at once" "$(kubectl get "${kind}s.r$round.ready.test" 2>&1)" "No resources found"
  done
  kubectl delete crd "${crds[@]}" --wait=false >/dev/null
done

# --- 2. the API server alone ---------------------------------------------------------------------
for f in examples/invalid/*.yaml; do
  n=$(basename "$f" .yaml)
  by=$(header "$f" rejected-by)
  out=$(kubectl apply -f "$f" 2>&1)
  case "$by" in
  *schema*)
    if kubectl get -f "$f" >/dev/null 2>&1; then bad "schema: $n was admitted by the API server alone"; kubectl delete -f "$f" >/dev/null 2>&1; continue; fi
    ok "schema: $n refused by the API server alone"
    while IFS= read -r want; do [ -n "$want" ] && contains "schema: $n: schema-message" "$out" "$want"; done < <(header "$f" schema-message)
    out=$(kubectl apply --server-side -f "$f" 2>&1)
    check "schema: $n refused under server-side apply too" sh -c "! kubectl get -f '$f' >/dev/null 2>&1"
    ;;
  *)
    if kubectl get -f "$f" >/dev/null 2>&1; then ok "schema: $n (rejected-by: $by) passes the CRD, as its header says"
    else bad "schema: $n (rejected-by: $by) refused by the API server alone: $out"; fi
    kubectl delete -f "$f" --wait=false >/dev/null 2>&1
    ;;
  esac
done
# defaults from the schema, seen on a server-side dry run
out=$(kubectl apply --dry-run=server -o json -f - 2>&1 <<'YAML'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: defaults-check}
spec:
  targetRef: {name: api}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /connect_timeout
      value: {seconds: 1}
YAML
)
equals "default targetRef.kind" "$(printf '%s' "$out" | jq -r .spec.targetRef.kind 2>/dev/null)" ServiceDefaults
equals "default proxyType" "$(printf '%s' "$out" | jq -r .spec.proxyType 2>/dev/null)" connect-proxy
equals "default debug" "$(printf '%s' "$out" | jq -r .spec.debug 2>/dev/null)" false

# --- 3. ValidatingAdmissionPolicy and matchConditions ---------------------------------------------
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: realapi-no-debug}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - {apiGroups: [propertyoverride.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [propertyoverrides]}
  validations:
    - expression: "!has(object.spec.debug) || !object.spec.debug"
      message: "realapi test policy: debug is off in this namespace"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: realapi-no-debug}
spec:
  policyName: realapi-no-debug
  validationActions: [Deny]
YAML
debug_po() {
  kubectl apply --dry-run=server -f - 2>&1 <<'YAML'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: debug-check}
spec:
  targetRef: {name: api}
  debug: true
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /connect_timeout
      value: {seconds: 1}
YAML
}
# the policy takes effect once the API server's policy informer has it: poll
eventually "a ValidatingAdmissionPolicy is enforced" 30 "denied" \
  sh -c "$(declare -f debug_po); debug_po | grep -q 'realapi test policy: debug is off' && echo denied"
kubectl delete validatingadmissionpolicybinding realapi-no-debug >/dev/null 2>&1
kubectl delete validatingadmissionpolicy realapi-no-debug >/dev/null 2>&1

lc_controller || { bad "the controller started"; finish; exit 1; }
lc_register_webhook Fail
# matchConditions: objects labelled realapi-test/skip-webhook are not sent to the webhook
kubectl patch validatingwebhookconfiguration propertyoverride --type=json -p '[{"op":"add","path":"/webhooks/0/matchConditions","value":[
  {"name":"not-skipped","expression":"!has(object.metadata.labels) || !(\"realapi-test/skip-webhook\" in object.metadata.labels)"}]}]' >/dev/null
skip_probe() { # label value: a webhook-only invalid object, dry run
  sed "s|^metadata:|metadata:\n  labels: {$1: \"x\"}|" examples/invalid/max-ejection-percent-over-100.yaml |
    kubectl apply --dry-run=server -f - 2>&1
}
eventually "matchConditions: a matching object goes to the webhook" 20 "denied" \
  sh -c "$(declare -f skip_probe); skip_probe other-label | grep -q 'uint32 lte 100' && echo denied"
eventually "matchConditions: an excluded object is not sent to it" 20 "admitted" \
  sh -c "$(declare -f skip_probe); skip_probe realapi-test/skip-webhook | grep -q 'created (server dry run)' && echo admitted"
kubectl delete validatingwebhookconfiguration propertyoverride >/dev/null
lc_register_webhook Fail

# --- 4. the examples with the controller and its webhook -----------------------------------------
check "examples/consul applied" kubectl apply -f examples/consul/
out=$(kubectl apply -f examples/valid/ -f examples/overlap/ 2>&1)
check "every valid and overlap example admitted" test $? = 0
for f in examples/valid/*.yaml examples/overlap/*.yaml; do
  check "$(basename "$f" .yaml) exists" kubectl get -f "$f"
done
check "kubectl wait Programmed" kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=60s
for n in $(kubectl get propertyoverrides -o jsonpath='{.items[*].metadata.name}'); do
  equals "$n Accepted" "$(cond "$n" Accepted status)" True
done
eventually "api: builtin/lua first, ours after in name order" 20 \
  "builtin/lua api-billing-db-tcp-keepalive@1 api-connect-timeout@1 api-listener-buffer-limits@1 api-payments-outlier-detection@1" \
  entries servicedefaults api

for f in examples/invalid/*.yaml; do
  n=$(basename "$f" .yaml)
  by=$(header "$f" rejected-by)
  out=$(kubectl apply -f "$f" 2>&1)
  if kubectl get -f "$f" >/dev/null 2>&1; then bad "$n was admitted"; kubectl delete -f "$f" >/dev/null 2>&1; continue; fi
  ok "$n refused"
  case "$by" in
  *schema*) # the API server's schema check runs before any webhook
    while IFS= read -r want; do [ -n "$want" ] && contains "$n: schema-message" "$out" "$want"; done < <(header "$f" schema-message) ;;
  *)
    contains "$n: refused by the webhook" "$out" 'admission webhook "validate.propertyoverride.io" denied the request'
    for key in webhook-message webhook-rule webhook-suggests; do
      while IFS= read -r want; do [ -n "$want" ] && contains "$n: $key" "$out" "$want"; done < <(header "$f" $key)
    done ;;
  esac
done
# The webhook's own verdict where the schema refuses first (the API server then never asks it):
# the AdmissionReview the API server would send, posted to the webhook: for `schema, webhook` it
# denies with each webhook-message. (A `schema`-only example cannot reach the webhook through
# the real server, but for unknown-spec-field's header below.)
review() { # file -> the webhook's AdmissionReview response
  kubectl create --dry-run=client -o json -f "$1" | jq -c '{apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: "realapi-example", kind: {group: "propertyoverride.io", version: "v1alpha1", kind: "PropertyOverride"},
      resource: {group: "propertyoverride.io", version: "v1alpha1", resource: "propertyoverrides"},
      name: .metadata.name, namespace: "default", operation: "CREATE", userInfo: {username: "admin"},
      object: (.metadata.namespace = "default"), dryRun: false}}' |
    curl -s --cacert "$LC_WORK/tls/ca.crt" -H 'Content-Type: application/json' --data-binary @- "https://127.0.0.1:$LC_WEBHOOK_PORT/validate"
}
for f in examples/invalid/*.yaml; do
  n=$(basename "$f" .yaml)
  by=$(header "$f" rejected-by)
  case "$by" in *schema*webhook*) ;; *) continue ;; esac
  resp=$(review "$f")
  equals "$n (rejected-by: $by): the webhook alone denies it too" "$(jq -r '.response.allowed' <<<"$resp" 2>/dev/null)" false
  for key in webhook-message webhook-rule webhook-suggests; do
    while IFS= read -r want; do [ -n "$want" ] && contains "$n: the webhook alone: $key" "$(jq -r '.response.status.message' <<<"$resp")" "$want"; done < <(header "$f" $key)
  done
done
# unknown-spec-field's header: with --validate=false the API server prunes the unknown field
# before the webhook sees it, and the pruned object is valid, so only strict validation catches it.
out=$(kubectl apply --validate=false --dry-run=server -f examples/invalid/unknown-spec-field.yaml 2>&1)
contains "unknown-spec-field with --validate=false: pruned, then admitted by the webhook" "$out" "created (server dry run)"
out=$(kubectl apply --server-side -f examples/invalid/unknown-field.yaml 2>&1)
contains "server-side apply goes through the webhook too" "$out" "no match for field 'max_ejection_percentage'!"

# --- 5. printer columns ---------------------------------------------------------------------------
header_line=$(kubectl get propertyoverrides 2>&1 | head -1)
wide_line=$(kubectl get propertyoverrides -o wide 2>&1 | head -1)
cols=$(kubectl get crd $crd -o json | jq -c '.spec.versions[] | select(.served) | .additionalPrinterColumns')
# priority 0 columns in kubectl get, the others only in -o wide
for name in $(printf '%s' "$cols" | jq -r '.[] | select((.priority // 0) == 0) | .name'); do
  contains "printer column $name in kubectl get" "$header_line" "$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')"
done
for name in $(printf '%s' "$cols" | jq -r '.[] | select((.priority // 0) > 0) | .name'); do
  check "printer column $name only in -o wide" sh -c "! printf '%s' '$header_line' | grep -qw '$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')' &&
    printf '%s' '$wide_line' | grep -qw '$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')'"
done
table=$(curl -s --cacert "$LC_WORK/tls/ca.crt" -H "Authorization: Bearer $(kubectl config view --raw -o jsonpath='{.users[0].user.token}')" \
  -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' \
  "$LC_URL/apis/propertyoverride.io/v1alpha1/namespaces/default/propertyoverrides/api-connect-timeout")
ncol=$(printf '%s' "$cols" | jq length)
for ((i = 0; i < ncol; i++)); do
  name=$(printf '%s' "$cols" | jq -r ".[$i].name")
  type=$(printf '%s' "$cols" | jq -r ".[$i].type")
  path=$(printf '%s' "$cols" | jq -r ".[$i].jsonPath")
  # the Table's columns: Name first, then the CRD's in order
  cell=$(printf '%s' "$table" | jq -r --arg n "$name" '(.columnDefinitions | map(.name) | index($n)) as $k | .rows[0].cells[$k] // "" | tostring')
  [ "$type" = date ] && { check "printer column $name has a value" test -n "$cell"; continue; }
  equals "printer column $name is $path" "$cell" "$(kubectl get propertyoverride api-connect-timeout -o jsonpath="{$path}")"
done

# --- 6. server-side apply --------------------------------------------------------------------------
check "kubectl apply --server-side of a client-side-applied object" kubectl apply --server-side -f examples/valid/tcp-keepalive.yaml
managers=$(kubectl get -f examples/valid/tcp-keepalive.yaml -o json --show-managed-fields | jq -r '[.metadata.managedFields[]? | "\(.manager)/\(.operation)"] | join(" ")')
contains "managedFields record the server-side apply" "$managers" "kubectl/Apply"
contains "managedFields record the controller's status writes" "$managers" "Update"
changed=$(sed 's/keepalive_time: 300$/keepalive_time: 1234/' examples/valid/tcp-keepalive.yaml)
[ "$changed" != "$(cat examples/valid/tcp-keepalive.yaml)" ] || bad "test setup: could not change a value in tcp-keepalive.yaml"
out=$(printf '%s\n' "$changed" | kubectl apply --server-side --field-manager realapi-other -f - 2>&1)
contains "a second manager changing a field owned by kubectl conflicts" "$out" "conflict"
check "--force-conflicts takes it over" sh -c "printf '%s\n' \"\$1\" | kubectl apply --server-side --field-manager realapi-other --force-conflicts -f - >/dev/null" _ "$changed"
check "the restored value applies again" kubectl apply --server-side --force-conflicts -f examples/valid/tcp-keepalive.yaml
check "Programmed after the edits" kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=60s

# --- 7. a controller restart deletes nothing -----------------------------------------------------
gen_of() { kubectl get propertyoverride "$1" -o jsonpath='{.metadata.generation}'; }
want_api="builtin/lua api-billing-db-tcp-keepalive@$(gen_of api-billing-db-tcp-keepalive) api-connect-timeout@1 api-listener-buffer-limits@1 api-payments-outlier-detection@1"
eventually "api before the restart" 20 "$want_api" entries servicedefaults api
specs() { kubectl get servicedefaults,proxydefaults -o json | jq -S -c '[.items[] | {kind, name: .metadata.name, spec}]'; }
before=$(specs)
# one watch per type (kubectl watches a single type); each starts from "now"
watch_pids=()
for t in servicedefaults proxydefaults propertyoverrides; do
  kubectl get $t --watch-only --output-watch-events -o json >"$ra_work/watch-$t.json" 2>"$ra_work/watch-$t.err" &
  watch_pids+=($!)
  lc_pids+=($!)
done
# a watch is open once it has seen a label set after it started: set it until it does; the
# counts below start after the event of the last value set
watch_open() { # object type
  local i
  for ((i = 0; i < 100; i++)); do
    kubectl label --overwrite "$1" "realapi-test/pre=open-$i" >/dev/null
    echo "open-$i" >"$ra_work/pre-$2"
    sleep 0.2
    grep -q "\"realapi-test/pre\":\"open-$i\"" "$ra_work/watch-$2.json" && return 0
  done
  return 1
}
check "the propertyoverrides watch is open" watch_open propertyoverride/api-connect-timeout propertyoverrides
check "the servicedefaults watch is open" watch_open servicedefaults/api servicedefaults
check "the proxydefaults watch is open" watch_open proxydefaults/global proxydefaults
kill -TERM "$LC_CONTROLLER_PID"
for ((i = 0; i < 200; i++)); do kill -0 "$LC_CONTROLLER_PID" 2>/dev/null || break; sleep 0.05; done
check "the controller stopped on SIGTERM" sh -c "! kill -0 $LC_CONTROLLER_PID 2>/dev/null"
lc_controller || { bad "the controller restarted"; finish; exit 1; }
lc_register_webhook Fail
eventually "the restarted controller leads" 30 "$LC_CONTROLLER_PID" \
  sh -c "kubectl get lease propertyoverride-controller -n default -o jsonpath='{.spec.holderIdentity}' | sed 's/.*_//'"
# it has reconciled every target once it counts successful reconciles for all of them
targets=$(kubectl get servicedefaults,proxydefaults -o name | wc -l)
reconciled() { curl -s "http://127.0.0.1:$LC_PROBE_PORT/metrics" | awk '/^controller_runtime_reconcile_total.*result="success"/ {s += $NF} END {print (s >= '"$targets"') ? "yes" : s + 0}'; }
eventually "the restarted controller reconciled every target" 30 yes reconciled
# a marker label on one object of each type is the last event each watch needs: once a watch has
# it, everything before it has arrived; events after it are not part of the restart
for o in propertyoverride/api-connect-timeout servicedefaults/api proxydefaults/global; do
  kubectl label "$o" realapi-test/marker=after-restart >/dev/null
done
for t in servicedefaults proxydefaults propertyoverrides; do
  eventually "the $t watch saw the marker" 20 yes sh -c "grep -q 'after-restart' '$ra_work/watch-$t.json' && echo yes"
done
kill "${watch_pids[@]}" 2>/dev/null
for t in servicedefaults proxydefaults propertyoverrides; do
  check "the $t watch ran" test ! -s "$ra_work/watch-$t.err" || cat "$ra_work/watch-$t.err"
done
# the events after the last pre-label event and before the marker
between='(map(.object.metadata.labels["realapi-test/pre"] == $final) | index(true)) as $i | (if $i == null then [] else .[$i + 1:] end)
  | map(select((.object.metadata.labels["realapi-test/marker"] // "") == ""))'
equals "no DELETED event across the restart" \
  "$(cat "$ra_work"/watch-*.json | jq -s '[.[] | select(.type=="DELETED")] | length')" 0
equals "no write to a Consul object across the restart" \
  "$(for t in servicedefaults proxydefaults; do jq -s --arg final "$(cat "$ra_work/pre-$t")" "$between | length" "$ra_work/watch-$t.json"; done |
    awk '{ s += $1 } END { print s + 0 }')" 0
equals "the targets' specs unchanged" "$(specs)" "$before"
equals "api unchanged" "$(entries servicedefaults api)" "$want_api"

# --- 8. delete: the finalizer removes only this entry --------------------------------------------
check "kubectl delete waits for the finalizer" kubectl delete propertyoverride api-listener-buffer-limits --wait=true --timeout=60s
eventually "only its entry went" 20 \
  "builtin/lua api-billing-db-tcp-keepalive@$(gen_of api-billing-db-tcp-keepalive) api-connect-timeout@1 api-payments-outlier-detection@1" \
  entries servicedefaults api

# --- 9. a JSON Patch's resourceVersion is a precondition -----------------------------------------
# The controller updates a target with a JSON Patch of the entries that changed, led by
# {"op":"replace","path":"/metadata/resourceVersion"} with the version it read: the API server
# must refuse it as a conflict once the object moved on (as it does an update carrying it), or
# entries written by index would land in a list that changed underneath.
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: jp-precondition}
spec:
  protocol: http
  envoyExtensions:
    - {name: builtin/lua, arguments: {ProxyType: connect-proxy, Listener: inbound, Script: "-- first"}}
YAML
jp_rv() { kubectl get servicedefaults jp-precondition -o jsonpath='{.metadata.resourceVersion}'; }
jp_scripts() { kubectl get servicedefaults jp-precondition -o json | jq -r '[.spec.envoyExtensions[].arguments.Script] | join(",")'; }
jp_patch() { # rv ops...
  local rv=$1 ops
  shift
  ops=$(printf ',%s' "$@")
  kubectl patch servicedefaults jp-precondition --type=json \
    -p "[{\"op\":\"replace\",\"path\":\"/metadata/resourceVersion\",\"value\":\"$rv\"}$ops]" 2>&1
}
jp_add='{"op":"add","path":"/spec/envoyExtensions/1","value":{"name":"builtin/lua","arguments":{"ProxyType":"connect-proxy","Listener":"inbound","Script":"-- second"}}}'
stale=$(jp_rv)
kubectl label servicedefaults jp-precondition realapi-test/moved=1 >/dev/null
contains "a JSON Patch carrying a stale resourceVersion is refused as a conflict" \
  "$(jp_patch "$stale" "$jp_add")" "the object has been modified"
equals "... and changes nothing" "$(jp_scripts)" "-- first"
contains "with the version read it applies" "$(jp_patch "$(jp_rv)" "$jp_add")" "patched"
equals "... adding at the index given" "$(jp_scripts)" "-- first,-- second"
contains "a removal by index with the version read" "$(jp_patch "$(jp_rv)" '{"op":"remove","path":"/spec/envoyExtensions/0"}')" "patched"
equals "... removes that entry alone" "$(jp_scripts)" "-- second"
kubectl delete servicedefaults jp-precondition >/dev/null
finish
