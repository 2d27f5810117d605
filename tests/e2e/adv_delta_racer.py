#!/usr/bin/env python3
"""t_adv_delta.sh's tenant: for SECONDS, edits the other extensions (builtin/lua, Script "f<n>") of
one ServiceDefaults as fast as it can, racing the controller's JSON Patches of its own entries:
adds one at a random index (between ours too; always while fewer than three), removes one, moves one, or swaps two, each a PUT over
the version it read (a 409 is read again). Some edits are JSON Patches by index with the version as
their precondition, as the controller sends. Ours it never touches. At the end prints
{"edits": n, "conflicts": n, "foreign": [the Scripts of the other extensions, in order, as it
left them]}.
  adv_delta_racer.py URL TOKEN CA_FILE NAMESPACE NAME SECONDS SEED"""
import json, random, ssl, sys, time, urllib.error, urllib.request

url, token, ca, ns, name, seconds, seed = sys.argv[1:8]
ctx = ssl.create_default_context(cafile=ca)
rng = random.Random(int(seed))
path = url + "/apis/consul.hashicorp.com/v1alpha1/namespaces/%s/servicedefaults/%s" % (ns, name)


def call(method, body=None, ct="application/json"):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(path, method=method, data=data,
                                 headers={"Authorization": "Bearer " + token, "Content-Type": ct})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, None


def foreign(e):
    return isinstance(e, dict) and e.get("name") == "builtin/lua"


stats, n, end = {"edits": 0, "conflicts": 0, "other": 0}, 0, time.time() + float(seconds)
while time.time() < end:
    code, obj = call("GET")
    if code != 200:
        stats["other"] += 1
        continue
    lst = (obj.get("spec") or {}).get("envoyExtensions") or []
    fidx = [i for i, e in enumerate(lst) if foreign(e)]
    what = rng.randrange(5) if len(fidx) >= 3 else 0  # three or more kept: ours have neighbours
    rv = obj["metadata"]["resourceVersion"]
    if what == 0 or not fidx:  # a new one at any index, between ours too
        n += 1
        at = rng.randrange(len(lst) + 1)
        lst.insert(at, {"name": "builtin/lua", "arguments": {"ProxyType": "connect-proxy", "Listener": "inbound",
                                                             "Script": "f%d-%s" % (n, seed)}})
    elif what == 1:
        lst.pop(rng.choice(fidx))
    elif what == 2:
        e = lst.pop(rng.choice(fidx))
        lst.insert(rng.randrange(len(lst) + 1), e)
    elif what == 3 and len(fidx) >= 2:
        i, j = rng.sample(fidx, 2)
        lst[i], lst[j] = lst[j], lst[i]
    else:  # by JSON Patch over the version read, as the controller does: one removed by index
        i = rng.choice(fidx)
        code, _ = call("PATCH", [{"op": "replace", "path": "/metadata/resourceVersion", "value": rv},
                                 {"op": "test", "path": "/spec/envoyExtensions/%d/name" % i, "value": "builtin/lua"},
                                 {"op": "remove", "path": "/spec/envoyExtensions/%d" % i}],
                       "application/json-patch+json")
        stats["edits" if code == 200 else "conflicts" if code in (409, 422) else "other"] += 1
        continue
    obj.setdefault("spec", {})["envoyExtensions"] = lst
    code, _ = call("PUT", obj)
    stats["edits" if code == 200 else "conflicts" if code == 409 else "other"] += 1
    time.sleep(rng.random() * 0.02)
code, obj = call("GET")
stats["foreign"] = [e["arguments"]["Script"] for e in (obj.get("spec") or {}).get("envoyExtensions") or [] if foreign(e)]
print(json.dumps(stats), flush=True)
