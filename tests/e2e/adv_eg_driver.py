#!/usr/bin/python3
"""The tenant's client for adv_eg_tenant.sh: HTTPRoutes through the API (ADV_URL, ADV_CA, ADV_TOKEN).
  bulk NS PREFIX N RULES PAD   N routes PREFIX%04d of RULES rules (PAD bytes of header matches each)
  churn NS SECONDS             create/delete NS/0000 and label-update NS/r00xx, for SECONDS
  fat NS N KB                  N routes fNNNN of ~KB KiB (16 rules, header matches never read)"""
import http.client, json, os, ssl, sys, time, urllib.parse

u = urllib.parse.urlparse(os.environ["ADV_URL"])
ctx = ssl.create_default_context(cafile=os.environ["ADV_CA"])
H = {"Authorization": "Bearer " + os.environ["ADV_TOKEN"], "Content-Type": "application/json"}
conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx)

def req(method, path, body=None, ctype=None):
    h = dict(H)
    if ctype: h["Content-Type"] = ctype
    conn.request(method, path, json.dumps(body) if body is not None else None, h)
    r = conn.getresponse(); data = r.read()
    return r.status, data

def base(ns): return "/apis/gateway.networking.k8s.io/v1/namespaces/%s/httproutes" % ns

def route(ns, name, rules, pad):
    rs = []
    for i in range(rules):
        r = {"backendRefs": [{"name": "svc-%d" % i, "port": 8080}]}
        if pad:
            per = max(1, pad // rules)
            hv = "x" * 200
            r["matches"] = [{"path": {"type": "PathPrefix", "value": "/%s/%d/%d" % (name, i, m)},
                             "headers": [{"name": "h%d" % k, "value": hv} for k in range(16)]}
                            for m in range(max(1, per // (16 * 220)))]
        rs.append(r)
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"parentRefs": [{"name": "eg", "namespace": "infra"}], "rules": rs}}

cmd = sys.argv[1]
if cmd == "bulk":
    ns, prefix, n, rules, pad = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    bad = 0
    for i in range(n):
        s, _ = req("POST", base(ns), route(ns, "%s%04d" % (prefix, i), rules, pad))
        bad += s >= 300
    print("bulk %d routes, %d refused" % (n, bad))
elif cmd == "churn":
    ns, secs = sys.argv[2], float(sys.argv[3])
    end = time.time() + secs; ops = 0; bad = 0; k = 0
    while time.time() < end:
        s, _ = req("POST", base(ns), route(ns, "0000", 1, 0)); ops += 1; bad += s >= 300
        s, _ = req("DELETE", base(ns) + "/0000"); ops += 1; bad += s >= 300
        s, _ = req("PATCH", base("tenant") + "/r%04d" % (k % 50), {"metadata": {"labels": {"churn": str(k)}}},
                   "application/merge-patch+json"); ops += 1; bad += s >= 300
        k += 1
    print("%d requests in %.0f s (%.1f/s), %d failed" % (ops, secs, ops / secs, bad))
elif cmd == "fat":
    ns, n, kb = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    bad = 0; total = 0; t0 = time.time()
    for i in range(n):
        body = route(ns, "f%04d" % i, 16, kb * 1024)
        total += len(json.dumps(body))
        s, d = req("POST", base(ns), body)
        if s >= 300:
            bad += 1
            if bad == 1: sys.stderr.write(d[:300].decode(errors="replace") + "\n")
    print("%d fat routes of %.0f KiB (%.1f MiB in all) in %.0f s, %d refused" % (n, total / n / 1024, total / 1048576, time.time() - t0, bad))
