"""A victim tenant's changes timed while another tenant churns (t_adv_burst.sh). Each round
creates one PropertyOverride on a target of its own and polls that target (every 20 ms) until it
holds the PropertyOverride's entry, then deletes it and polls until it is gone (our finalizer
released, its entry removed first): prints both latencies, one round per line, in seconds.
Run by /usr/bin/python3; loopback only."""
import argparse, http.client, json, ssl, time, urllib.parse

p = argparse.ArgumentParser()
for a in ("--url", "--token", "--ca"):
    p.add_argument(a, required=True)
p.add_argument("--ns", default="victim")
p.add_argument("--rounds", type=int, default=8)
p.add_argument("--prefix", default="v")
p.add_argument("--gap", type=float, default=1.5)
args = p.parse_args()
u = urllib.parse.urlsplit(args.url)
conn = http.client.HTTPSConnection(u.hostname, u.port, context=ssl.create_default_context(cafile=args.ca), timeout=30)
PO = "/apis/propertyoverride.io/v1alpha1/namespaces/%s/propertyoverrides" % args.ns
SD = "/apis/consul.hashicorp.com/v1alpha1/namespaces/%s/servicedefaults/" % args.ns


def call(method, path, body=None):
    conn.request(method, path, body=json.dumps(body).encode() if body else None,
                 headers={"Authorization": "Bearer " + args.token, "Content-Type": "application/json"})
    r = conn.getresponse()
    return r.status, json.loads(r.read() or b"{}")


def holds(target, name):
    code, o = call("GET", SD + target)
    if code != 200:
        return False
    for e in (o.get("spec") or {}).get("envoyExtensions") or []:
        m = (e.get("arguments") or {}).get("PropertyOverride")
        if isinstance(m, dict) and m.get("name") == name:
            return True
    return False


for i in range(args.rounds):
    name, target = "%s-%02d" % (args.prefix, i), "svc-%s-%02d" % (args.prefix, i)
    obj = {"apiVersion": "propertyoverride.io/v1alpha1", "kind": "PropertyOverride",
           "metadata": {"name": name, "namespace": args.ns},
           "spec": {"targetRef": {"name": target}, "patches": [
               {"resourceFilter": {"resourceType": "cluster", "trafficDirection": "outbound"},
                "op": "add", "path": "/outlier_detection/max_ejection_percent", "value": 7}]}}
    t0 = time.monotonic()
    code, o = call("POST", PO, obj)
    if code != 201:
        raise SystemExit("create %s: %s %s" % (name, code, o.get("message")))
    while not holds(target, name):
        if time.monotonic() - t0 > 30:
            raise SystemExit("%s: no entry in its target after 30 s" % name)
        time.sleep(0.02)
    created = time.monotonic() - t0
    t0 = time.monotonic()
    code, o = call("DELETE", PO + "/" + name)
    if code not in (200, 202):
        raise SystemExit("delete %s: %s %s" % (name, code, o.get("message")))
    while call("GET", PO + "/" + name)[0] != 404:
        if time.monotonic() - t0 > 30:
            raise SystemExit("%s: not gone 30 s after its delete" % name)
        time.sleep(0.02)
    if holds(target, name):
        raise SystemExit("%s: gone, its entry still in its target" % name)
    print("%.3f %.3f" % (created, time.monotonic() - t0), flush=True)
    time.sleep(args.gap)
