#!/usr/bin/env bash
# A hostile tenant's targets against the controller's memory (targets kept compressed,
# po_App_TextOptions): N ServiceDefaults of ~SIZE bytes of base64 foreign entries (compress to
# ~3/4), 4 of ~1.4 MB, 10 PropertyOverrides on each of the first 20; the controller started on
# them, then every target rewritten twice. Prints VmRSS/VmHWM per phase for each build given
# (the first starts the cluster), one controller at a time on the same cluster.
#   PO_APISERVER=real bash tests/e2e/adv_targets_memory.sh BUILD [OTHER_BUILD...]
. "$(dirname "$0")/lib.sh"
n=${PO_MEM_TARGETS:-300} size=${PO_MEM_SIZE:-100000}
export PO_MEM_BIG=${PO_MEM_BIG:-4} # targets of 1.4 MB among them
lc_start "$1" "$e2e_work" || exit 1
drive() { /usr/bin/python3 - "$@" --url "$LC_URL" --token "$(lc_token)" --ca "$LC_WORK/tls/ca.crt" <<'PY'
import argparse, base64, http.client, json, os, ssl, sys, urllib.parse
p = argparse.ArgumentParser(); p.add_argument("mode"); p.add_argument("n", type=int); p.add_argument("size", type=int)
p.add_argument("--url"); p.add_argument("--token"); p.add_argument("--ca"); a = p.parse_args()
u = urllib.parse.urlparse(a.url); ctx = ssl.create_default_context(cafile=a.ca)
c = http.client.HTTPSConnection(u.hostname, u.port, context=ctx)
def call(m, path, body=None):
    c.request(m, path, body=json.dumps(body) if body is not None else None,
              headers={"Authorization": "Bearer " + a.token, "Content-Type": "application/json"})
    r = c.getresponse(); d = r.read()
    if r.status >= 300 and not (m == "POST" and r.status == 409): sys.exit("%s %s: %d %s" % (m, path, r.status, d[:300]))
    return json.loads(d) if d else None
SD = "/apis/consul.hashicorp.com/v1alpha1/namespaces/default/servicedefaults"
def blob(n): return base64.b64encode(os.urandom(n * 3 // 4)).decode()
def sd(i):
    size = 1400000 if i < int(os.environ.get("PO_MEM_BIG", "4")) else a.size
    k = max(1, size // 200000)
    return {"apiVersion": "consul.hashicorp.com/v1alpha1", "kind": "ServiceDefaults",
            "metadata": {"name": "hostile-%04d" % i},
            "spec": {"protocol": "http", "envoyExtensions": [{"name": "builtin/lua", "arguments": {"Script": blob(size // k)}} for _ in range(k)]}}
if a.mode == "create":
    for i in range(a.n): call("POST", SD, sd(i))
    for i in range(200):
        call("POST", "/apis/propertyoverride.io/v1alpha1/namespaces/default/propertyoverrides",
             {"apiVersion": "propertyoverride.io/v1alpha1", "kind": "PropertyOverride", "metadata": {"name": "mpo-%03d" % i},
              "spec": {"targetRef": {"name": "hostile-%04d" % (i % 20)}, "patches": [{"resourceFilter": {"resourceType": "cluster", "trafficDirection": "outbound"}, "op": "add", "path": "/outlier_detection/max_ejection_percent", "value": 1 + i % 90}]}})
else:  # rewrite every target: a fresh blob, the rest (our entries too) kept
    for i in range(a.n):
        o = call("GET", SD + "/hostile-%04d" % i)
        for e in o["spec"]["envoyExtensions"]:
            if e["name"] == "builtin/lua": e["arguments"]["Script"] = blob(len(e["arguments"]["Script"]))
        o["metadata"].pop("managedFields", None)
        call("PUT", SD + "/hostile-%04d" % i, o)
PY
}
drive create "$n" "$size" || { bad "creating"; finish; exit 1; }
echo "     $n targets of ~$size bytes ($PO_MEM_BIG of 1.4 MB), 200 PropertyOverrides on 20 of them; load $(cut -d' ' -f1-3 /proc/loadavg)"
msum() { curl -s "http://127.0.0.1:$LC_PROBE_PORT/metrics" | awk -v re="$1" '$0 ~ re {n += $NF} END {printf "%d", n}'; }
drained() { local end=$((SECONDS + 180)); until [ "$(msum '^workqueue_depth[{]')" = 0 ] && sleep 3 && [ "$(msum '^workqueue_depth[{]')" = 0 ]; do [ $SECONDS -ge $end ] && return 1; sleep 1; done; }
mem() { awk '/VmRSS|VmHWM/ {printf "%s %d MB  ", $1, $2 / 1024}' /proc/$LC_CONTROLLER_PID/status; }
for b in "$@"; do
  LC_BUILD=$(cd "$b" && pwd)
  lc_controller --workers 8 --log-level warn --leader-elect=false --kube-api-qps 2000 --kube-api-burst 4000 || { bad "$b: no controller"; continue; }
  drained || bad "$b: not drained"
  echo "     $b: synced and drained: $(mem)"
  drive churn "$n" "$size" && drive churn "$n" "$size"
  drained || bad "$b: not drained after the rewrites"
  echo "     $b: after every target rewritten twice: $(mem) (load $(cut -d' ' -f1 /proc/loadavg))"
  ok "$b measured"
  kill -TERM "$LC_CONTROLLER_PID"; for ((i = 0; i < 200; i++)); do kill -0 "$LC_CONTROLLER_PID" 2>/dev/null || break; sleep 0.05; done
done
finish
