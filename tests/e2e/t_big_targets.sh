#!/usr/bin/env bash
# Consul targets kept compressed (po_App_TextOptions) at their worst: ServiceDefaults whose foreign
# envoyExtensions carry base64 blobs and random UTF-8 (compressing badly), up to ~1.2 MB each (the
# API server's ~1.5 MB limit), applied server-side (managedFields the cache cuts), with 50
# PropertyOverrides each. Asserted: every target converges to exactly its entries, the foreign
# entries and the user's fields read back byte-exact (their digest before and after), the
# controller settles (no write while nothing changes), a user's rewrite of a big target keeping
# its foreign entries is repaired, and a restart writes nothing.
. "$(dirname "$0")/lib.sh"
build=$1
per=${PO_BIG_PER:-50}
lc_start "$build" "$e2e_work" || exit 1
flags=(--workers 8 --log-level warn --leader-elect=false --kube-api-qps 2000 --kube-api-burst 4000)
lc_controller "${flags[@]}" || exit 1
# big-0: base64 blobs (~1.2 MB); big-1: random UTF-8 (~0.9 MB); big-2: both, small (~60 KB);
# big-3: a ProxyDefaults-free ServiceDefaults with no foreign entry, only ours.
/usr/bin/python3 - "$e2e_work" <<'PY'
import base64, json, os, random, sys
random.seed(26)
def utf8(n):
    return "".join(chr(random.randint(0x100, 0xd7ff)) for _ in range(n))
def b64(n):
    return base64.b64encode(os.urandom(n * 3 // 4)).decode()
def target(name, blobs):
    ext = [{"name": "builtin/lua", "required": True,
            "arguments": {"ProxyType": "connect-proxy", "Listener": "inbound", "Script": s}} for s in blobs]
    return {"apiVersion": "consul.hashicorp.com/v1alpha1", "kind": "ServiceDefaults",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"protocol": "http", "envoyExtensions": ext}}
ts = [target("big-0", [b64(300000) for _ in range(4)]),
      target("big-1", [utf8(100000) for _ in range(3)]),
      target("big-2", [b64(20000), utf8(10000)]),
      target("big-3", [])]
for t in ts:
    open(os.path.join(sys.argv[1], t["metadata"]["name"] + ".json"), "w").write(json.dumps(t))
PY
for i in 0 1 2 3; do
  kubectl apply --server-side --field-manager tenant -f "$e2e_work/big-$i.json" >/dev/null ||
    { bad "applying big-$i ($(wc -c <"$e2e_work/big-$i.json") bytes)"; finish; exit 1; }
done
ok "4 targets applied server-side: $(for i in 0 1 2 3; do printf '%s ' "$(wc -c <"$e2e_work/big-$i.json")"; done)bytes"
# the tenant's part of a target (foreign entries in order, the user's fields), digested
foreign() { kubectl get servicedefaults "$1" -o json | jq -c '[.spec.envoyExtensions // [] | .[] | select(.arguments.PropertyOverride == null)], .spec.protocol' | sha256sum | cut -c1-16; }
declare -A before
for i in 0 1 2 3; do before[$i]=$(foreign big-$i); done
{
  for i in 0 1 2 3; do
    for j in $(seq -w 0 $((per - 1))); do
      printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: po-%s-%s}\nspec:\n  targetRef: {name: big-%s}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %d\n---\n' "$i" "$j" "$i" $((10#$j + 1))
    done
  done
} >"$e2e_work/overrides.yaml"
kubectl apply -f "$e2e_work/overrides.yaml" >/dev/null || { bad "creating the PropertyOverrides"; finish; exit 1; }
want() { kubectl get propertyoverrides -o json | jq -r --arg t "$1" '[.items[] | select(.spec.targetRef.name == $t) | "\(.metadata.name)@\(.metadata.generation)"] | sort | join(" ")'; }
ours() { entries servicedefaults "$1" | tr ' ' '\n' | grep '^po-' | sort | xargs; }
all_right() {
  local i
  for i in 0 1 2 3; do [ "$(ours big-$i)" = "$(want big-$i)" ] || return 1; done
}
conv() { local end=$((SECONDS + $1)); until all_right; do [ $SECONDS -ge $end ] && return 1; sleep 1; done; }
if conv 120; then ok "converged: $per PropertyOverrides in each of 4 targets"; else
  for i in 0 1 2 3; do echo "     big-$i: $(ours big-$i | wc -w) of $per entries"; done
  bad "did not converge"; fi
for i in 0 1 2 3; do check "big-$i: foreign entries and user fields byte-exact" test "$(foreign big-$i)" = "${before[$i]}"; done
msum() { curl -s "http://127.0.0.1:$LC_PROBE_PORT/metrics" | awk -v re="$1" '$0 ~ re {n += $NF} END {printf "%d", n}'; }
writes() { msum '^rest_client_requests_total[{].*method="(POST|PUT|PATCH|DELETE)"'; }
sleep 3
w0=$(writes); sleep 6; w1=$(writes)
check "settled: no write in 6 s of quiet ($w0 then $w1)" test "$w0" = "$w1"
echo "     RSS after convergence: $(awk '/VmRSS|VmHWM/ {printf "%s %s kB  ", $1, $2}' /proc/$LC_CONTROLLER_PID/status)"

# the tenant rewrites big-0 from its file (no entries of ours): repaired, foreign kept
kubectl apply --server-side --force-conflicts --field-manager tenant -f "$e2e_work/big-0.json" >/dev/null
if conv 60; then ok "big-0 rewritten by its tenant: repaired"; else bad "big-0 rewritten by its tenant: not repaired ($(ours big-0 | wc -w) entries)"; fi
check "big-0 after the rewrite: foreign entries byte-exact" test "$(foreign big-0)" = "${before[0]}"

# a restart: nothing changed, nothing written
kill -TERM "$LC_CONTROLLER_PID"
for ((i = 0; i < 400; i++)); do kill -0 "$LC_CONTROLLER_PID" 2>/dev/null || break; sleep 0.05; done
lc_controller "${flags[@]}" || { bad "the new controller did not start"; finish; exit 1; }
sleep 8
w=$(writes)
check "zero writes in 8 s after the restart ($w)" test "$w" = 0
check "still converged after the restart" all_right
for i in 0 1 2 3; do check "big-$i after the restart: foreign byte-exact" test "$(foreign big-$i)" = "${before[$i]}"; done
finish
