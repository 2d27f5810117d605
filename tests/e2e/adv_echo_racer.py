#!/usr/bin/env python3
"""t_adv_echo.sh's racer: watches PropertyOverrides; for each new one annotates it at once (racing the
controller's finalizer patch), and on the first event that shows the controller's finalizer strips it
at once (a JSON patch with a test op: only that finalizer) and then edits a label. Stops after COUNT
strips; prints {"strip": n, "strip_failed": n, "annotated": n} (strip keeps the last count written).
  adv_echo_racer.py URL TOKEN CA_FILE NAMESPACE COUNT"""
import json, ssl, sys, threading, urllib.error, urllib.request

url, token, ca, ns, count = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
ctx = ssl.create_default_context(cafile=ca)
P = "/apis/propertyoverride.io/v1alpha1/namespaces/%s/propertyoverrides" % ns
FIN = "propertyoverride.io/finalizer"
lock = threading.Lock()
stats = {"strip": 0, "strip_failed": 0, "annotated": 0}


def call(method, path, body, ct):
    req = urllib.request.Request(url + path, method=method, data=json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + token, "Content-Type": ct})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def bump(k):
    with lock:
        stats[k] += 1


def annotate(name):
    call("PATCH", P + "/" + name, {"metadata": {"annotations": {"adv-echo": "1"}}}, "application/merge-patch+json")
    bump("annotated")


def strip(name, i):
    c = call("PATCH", P + "/" + name, [{"op": "test", "path": "/metadata/finalizers/%d" % i, "value": FIN},
                                        {"op": "remove", "path": "/metadata/finalizers/%d" % i}], "application/json-patch+json")
    call("PATCH", P + "/" + name, {"metadata": {"labels": {"adv-echo": "stripped"}}}, "application/merge-patch+json")
    bump("strip" if c == 200 else "strip_failed")


print("watching", flush=True)
seen, stripped, threads, rv = set(), set(), [], ""
while len(stripped) < count:  # a watch the server ends is started again where it stopped
    req = urllib.request.Request(url + P + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=120&resourceVersion=" + rv,
                                 headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, context=ctx, timeout=150) as r:
        for line in r:
            ev = json.loads(line)
            md = ev["object"]["metadata"]
            rv = md.get("resourceVersion", rv)
            if ev["type"] not in ("ADDED", "MODIFIED"):
                continue
            name, fins = md["name"], md.get("finalizers") or []
            if ev["type"] == "ADDED" and name not in seen:
                seen.add(name)
                threads.append(threading.Thread(target=annotate, args=(name,)))
                threads[-1].start()
            if ev["type"] == "MODIFIED" and FIN in fins and name not in stripped and not md.get("deletionTimestamp"):
                stripped.add(name)
                threads.append(threading.Thread(target=strip, args=(name, fins.index(FIN))))
                threads[-1].start()
            if len(stripped) >= count:
                break
for t in threads:
    t.join()
print(json.dumps(stats), flush=True)
