"""Bulk PropertyOverrides for the restart test, straight through the API (one keep-alive
connection; kubectl one by one would take minutes). Run by /usr/bin/python3; loopback only.

  create --count N --targets T   po-NNNN targets svc-(NNNN mod T), one valid patch each
  churn --stop-file F            valid edits (new values) of random PropertyOverrides until F exists
  wait --timeout S               until every status is current and every target holds exactly the
                                 entries of the PropertyOverrides pointing at it, at their generations
"""
import argparse, http.client, json, os, random, ssl, sys, time, urllib.parse

p = argparse.ArgumentParser()
p.add_argument("mode", choices=("create", "churn", "wait"))
for a in ("--url", "--token", "--ca"):
    p.add_argument(a, required=True)
p.add_argument("--ns", default="default")
p.add_argument("--count", type=int, default=2000)
p.add_argument("--targets", type=int, default=1000)
p.add_argument("--stop-file")
p.add_argument("--seed", type=int, default=11)
p.add_argument("--timeout", type=float, default=120)
p.add_argument("--interval", type=float, default=0.01)  # churn: the pause between two edits
args = p.parse_args()
u = urllib.parse.urlsplit(args.url)
ctx = ssl.create_default_context(cafile=args.ca)
PO = "/apis/propertyoverride.io/v1alpha1/namespaces/%s/propertyoverrides" % args.ns
SD = "/apis/consul.hashicorp.com/v1alpha1/namespaces/%s/servicedefaults" % args.ns
conn = [None]


def call(method, path, body=None, ctype="application/json"):
    data = json.dumps(body).encode() if body is not None else None
    for i in range(50):
        if conn[0] is None:
            conn[0] = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=30)
        try:
            conn[0].request(method, path, body=data, headers={"Authorization": "Bearer " + args.token, "Content-Type": ctype})
            r = conn[0].getresponse()
            out = r.read()
            if r.status in (429, 500, 502, 503, 504):
                time.sleep(0.05 * (i + 1)); continue
            return r.status, json.loads(out or b"{}")
        except (OSError, http.client.HTTPException):
            conn[0].close(); conn[0] = None; time.sleep(0.05 * (i + 1))
    raise SystemExit("API unreachable for %s %s" % (method, path))


def patches(value):
    return [{"resourceFilter": {"resourceType": "cluster", "trafficDirection": "outbound"},
             "op": "add", "path": "/outlier_detection/max_ejection_percent", "value": value}]


def create():
    t0 = time.time()
    for i in range(args.count):
        obj = {"apiVersion": "propertyoverride.io/v1alpha1", "kind": "PropertyOverride",
               "metadata": {"name": "po-%04d" % i, "namespace": args.ns},
               "spec": {"targetRef": {"name": "svc-%04d" % (i % args.targets)}, "patches": patches(1 + i % 99)}}
        code, o = call("POST", PO, obj)
        if code != 201:
            raise SystemExit("create po-%04d: %s %s" % (i, code, o.get("message")))
    print("created %d PropertyOverrides over %d targets in %.1fs" % (args.count, args.targets, time.time() - t0), flush=True)


def churn():
    rnd, n, t0 = random.Random(args.seed), 0, time.time()
    while not os.path.exists(args.stop_file):
        name = "po-%04d" % rnd.randrange(args.count)
        code, o = call("PATCH", PO + "/" + name, {"spec": {"patches": patches(rnd.randrange(1, 100))}},
                       "application/merge-patch+json")
        if code != 200:
            raise SystemExit("edit %s: %s %s" % (name, code, o.get("message")))
        n += 1
        time.sleep(args.interval)
    print("%d edits in %.1fs" % (n, time.time() - t0), flush=True)


def lst(path):
    code, o = call("GET", path)
    if code != 200:
        raise SystemExit("list %s: %s" % (path, code))
    return o.get("items") or []


def converged():
    want = {}
    for o in lst(PO):
        st, gen = o.get("status") or {}, o["metadata"]["generation"]
        if st.get("observedGeneration") != gen or st.get("programmedGeneration") != gen:
            return "%s: status at %s/%s, object at %s" % (o["metadata"]["name"], st.get("observedGeneration"),
                                                         st.get("programmedGeneration"), gen)
        want.setdefault(o["spec"]["targetRef"]["name"], set()).add("%s@%d" % (o["metadata"]["name"], gen))
    have = {}
    for t in lst(SD):
        for e in t["spec"].get("envoyExtensions") or []:
            m = (e.get("arguments") or {}).get("PropertyOverride")
            if isinstance(m, dict):
                have.setdefault(t["metadata"]["name"], set()).add("%s@%s" % (m.get("name"), m.get("generation")))
    if want != have:
        diff = [t for t in sorted(set(want) | set(have)) if want.get(t) != have.get(t)]
        return "%d targets differ, e.g. %s: want %s have %s" % (len(diff), diff[0], sorted(want.get(diff[0], ())),
                                                                sorted(have.get(diff[0], ())))
    return None


def wait():
    t0, end = time.time(), time.time() + args.timeout
    while True:
        why = converged()
        if why is None:
            print("converged in %.1fs" % (time.time() - t0), flush=True)
            return
        if time.time() > end:
            raise SystemExit("not converged after %.0fs: %s" % (args.timeout, why))
        time.sleep(0.5)


{"create": create, "churn": churn, "wait": wait}[args.mode]()
