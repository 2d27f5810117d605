#!/usr/bin/env bash
# adv-23: one cluster patch of a Gateway target whose value alone passes the policy's 1 MiB bound
# (180,000 U+2028, counted 6 bytes each as the API server stores them; the PropertyOverride itself
# is 0.54 MB, under etcd's 1.5 MiB) is valid, and render prints its EnvoyPatchPolicy with no
# entries at all, exit 0, not a word on stderr: the route is left out as a flood would be, so
# Envoy Gateway applies nothing where Consul applies the patch. A listener patch of that size is
# refused (TargetError); this one must be refused or at least said.
. "$(dirname "$0")/lib.sh"
fx=tests/egpatch/fixtures
val=$(yes $'\xe2\x80\xa8' | tr -d '\n' | head -c 540000)
printf '{"apiVersion":"propertyoverride.io/v1alpha1","kind":"PropertyOverride","metadata":{"name":"big","namespace":"default"},"spec":{"targetRef":{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"eg"},"patches":[{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add","path":"/alt_stat_name","value":"%s"}]}}\n' "$val" >"$work/big.json"
"$bin" validate -f "$work/big.json" >"$work/v.out" 2>&1
check "the PropertyOverride is valid" 0 $? "$work/v.out"
"$bin" render -f "$work/big.json" -f "$fx/gateway.json" -f "$fx/httproute.json" >"$work/out" 2>"$work/err"
rc=$?
if [ "$rc" = 0 ] && grep -q 'jsonPatches: \[\]' "$work/out" && [ ! -s "$work/err" ]; then
  echo "FAIL render printed a policy without entries, exit 0, nothing said:"; grep -v '^ *$' "$work/out"; fail=$((fail+1))
else
  pass=$((pass+1))
fi
finish
