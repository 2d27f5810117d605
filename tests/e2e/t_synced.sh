#!/usr/bin/env bash
# Programmed means live (issue 11 part 1): under --consul-sync-status=require, a PropertyOverride
# is Programmed only once consul-k8s reports its target Synced after our write. consul-k8s is
# played by the local API server's test double (--fake-consul-k8s, tests/apiserver/README.md),
# steered per target by annotations: consul-k8s-fake.propertyoverride.io/delay-ms (sync later) and
# consul-k8s-fake.propertyoverride.io/fail (Consul refuses the entry). Cases, with the real
# kubectl: Pending -> Programmed; SyncFailed with consul-k8s's own message, then fixed; the
# timeout's one Warning Event SyncTimeout; spec.required reaching the entry; ignore mode (no
# consul-k8s): written is programmed; a tenant removing or forging the write record
# (propertyoverride.io/written) does not make a stalled write look synced.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" --fake-consul-k8s || exit 1
LC_CONSUL_SYNC=require lc_controller --consul-sync-timeout 6 || exit 1
lc_register_webhook Fail

target() { # name [annotations as YAML flow map entries]
  kubectl apply -f - >/dev/null <<YAML
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: $1, namespace: default, annotations: {${2:-}}}
spec: {protocol: http}
YAML
}
po() { # name target value
  kubectl apply -f - >/dev/null <<YAML
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: $1, namespace: default}
spec:
  targetRef: {kind: ServiceDefaults, name: $2}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection/max_ejection_percent
      value: $3
YAML
}
synced() { kubectl get servicedefaults "$1" -o jsonpath='{.status.conditions[?(@.type=="Synced")].status}' 2>/dev/null; }
events() { # object reason: how many times it was raised (the recorder coalesces: .count)
  kubectl get events -n default -o json | jq -r --arg n "$1" --arg r "$2" \
    '[.items[] | select(.involvedObject.name == $n and .reason == $r) | (.count // 1)] | add // 0'
}

echo "# Pending -> Programmed: consul-k8s syncs 'slow' 5 s after each change"
target slow '"consul-k8s-fake.propertyoverride.io/delay-ms": "5000"'
eventually "the fake consul-k8s syncs a target by itself (before any entry of ours)" 20 True synced slow
po p1 slow 11
eventually "Programmed=False Pending while consul-k8s has not synced our write" 15 Pending cond p1 Programmed reason
contains "the Pending message says what it waits for" "$(cond p1 Programmed message)" "waiting for consul-k8s to sync it into Consul"
check "kubectl wait --for=condition=Programmed succeeds once synced" \
  kubectl wait --for=condition=Programmed propertyoverride/p1 --timeout=60s
check "the target is Synced=True now" test "$(synced slow)" = True
ann=$(kubectl get servicedefaults slow -o jsonpath='{.metadata.annotations.propertyoverride\.io/written}')
contains "the write record is on the target (it survives restarts)" "$ann" "at="
kubectl get pov
kubectl describe pov p1 | sed -n '/Conditions:/,$p'

echo "# SyncFailed: Consul refuses 'broken'"
target broken '"consul-k8s-fake.propertyoverride.io/fail": "Unexpected response code: 500 (Config entry failed to validate)"'
eventually "the fake reports the refusal on the target" 20 False synced broken
po p2 broken 12
eventually "Programmed=False SyncFailed" 30 SyncFailed cond p2 Programmed reason
contains "with consul-k8s's own message" "$(cond p2 Programmed message)" \
  "(Synced=False, ConsulAgentError): writing config entry to consul: Unexpected response code: 500 (Config entry failed to validate)"
eventually "a Warning Event SyncFailed on the PropertyOverride" 20 yes sh -c "[ \$(kubectl get events -n default -o json | jq '[.items[] | select(.involvedObject.name == \"p2\" and .reason == \"SyncFailed\" and .type == \"Warning\")] | length') -ge 1 ] && echo yes"
kubectl get pov p2
kubectl describe pov p2 | sed -n '/Conditions:/,$p'
kubectl annotate servicedefaults broken consul-k8s-fake.propertyoverride.io/fail- >/dev/null
eventually "fixed on Consul's side: Programmed" 30 True cond p2 Programmed status

echo "# the timeout: 'never' is not synced within --consul-sync-timeout 6"
target never '"consul-k8s-fake.propertyoverride.io/delay-ms": "600000"'
po p3 never 13
eventually "Pending" 15 Pending cond p3 Programmed reason
eventually "one Warning Event SyncTimeout after the timeout" 30 1 events p3 SyncTimeout
contains "the message says what to check" "$(cond p3 Programmed message)" "consul-k8s has not reported ServiceDefaults default/never synced within 6s"
sleep 3 # (a few more reconciles of the target: none raises it again)
kubectl annotate servicedefaults never touched=1 >/dev/null
eventually "still exactly one" 10 1 events p3 SyncTimeout
kubectl describe pov p3 | sed -n '/Conditions:/,$p'

echo "# a tenant forges the write record: 'forged' synced once, then consul-k8s stalls on our write"
target forged
eventually "the fake consul-k8s syncs 'forged' by itself" 20 True synced forged
kubectl annotate servicedefaults forged consul-k8s-fake.propertyoverride.io/delay-ms=600000 >/dev/null
po p6 forged 16
eventually "Pending" 15 Pending cond p6 Programmed reason
kubectl annotate servicedefaults forged propertyoverride.io/written- >/dev/null
not_true() { [ "$(cond p6 Programmed status)" != True ]; }
check "the record removed by a tenant: still not Programmed (Synced=True predates our write)" holds 4 not_true
kubectl annotate --overwrite servicedefaults forged \
  propertyoverride.io/written="at=9999-12-31T23:59:59Z spec=0000000000000001 status=0000000000000002" >/dev/null
check "the record forged (dated 9999): still not Programmed" holds 4 not_true

echo "# spec.required: the entry's required flag"
kubectl patch pov p1 --type merge -p '{"spec":{"required":true}}' >/dev/null
eventually "spec.required: true -> the entry in the target is required: true" 30 true sh -c \
  "kubectl get servicedefaults slow -o json | jq -r '.spec.envoyExtensions[] | select(.arguments.PropertyOverride.name == \"p1\") | .required'"
out=$(kubectl patch pov p1 --type merge -p '{"spec":{"required":"yes"}}' 2>&1)
contains "a non-boolean required is refused by the schema" "$out" "spec.required"
check "kubectl explain knows spec.required" sh -c "kubectl explain propertyoverride.spec.required | grep -q 'refuses that proxy'"

echo "# where the target lives: ServiceDefaults 'shared' exists in namespace apps only"
kubectl create namespace apps >/dev/null
kubectl apply -f - >/dev/null <<YAML
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: shared, namespace: apps}
spec: {protocol: http}
YAML
po p5 shared 15
eventually "Programmed=False TargetInOtherNamespace" 30 TargetInOtherNamespace cond p5 Programmed reason
contains "the message names the namespace and says why" "$(cond p5 Programmed message)" \
  "ServiceDefaults shared exists in namespace 'apps', not in 'default': consul-k8s syncs"
check "no ServiceDefaults shared was created in default" sh -c "! kubectl get servicedefaults shared -n default >/dev/null 2>&1"
kubectl describe pov p5 | sed -n '/Conditions:/,/Observed Generation/p'
kubectl delete pov p5 >/dev/null

echo "# ignore mode (a cluster without consul-k8s): written is programmed"
kill "$LC_CONTROLLER_PID"
wait "$LC_CONTROLLER_PID" 2>/dev/null
LC_CONSUL_SYNC=ignore lc_controller || exit 1
lc_register_webhook Fail # (the new one serves on a new port)
po p4 never 14
eventually "p4 Programmed although 'never' is not synced" 30 True cond p4 Programmed status
eventually "p3 Programmed too" 30 True cond p3 Programmed status
kubectl get pov
finish
