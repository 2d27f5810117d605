#!/usr/bin/env python3
"""t_adv_delta_apply.sh's driver: for each case of test_consul_delta's random edits (PO_DELTA_DUMP:
a JSON line {old, new, patch} each; old null: no list), puts one ServiceDefaults holding `old`,
sends `patch` (po_Consul_Delta's, its resourceVersion the one just read) as the controller does, and
requires the server's list to be exactly `new`. Every COUNT-th case, the same patch again over a
version that has moved on (the list edited by a tenant first) must be refused, 409 or 422, and
change nothing. Prints {"cases": n, "applied": n, "refused_moved": {code: n}, "bad": [...]}.
  adv_delta_apply.py URL TOKEN CA_FILE CASES_FILE MAX"""
import json, ssl, sys, urllib.error, urllib.request

url, token, ca, cases_file, most = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
ctx = ssl.create_default_context(cafile=ca)
path = url + "/apis/consul.hashicorp.com/v1alpha1/namespaces/default/servicedefaults/delta"


def call(method, body=None, ct="application/json"):
    req = urllib.request.Request(path if method != "POST" else path.rsplit("/", 1)[0], method=method,
                                 data=None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode()),
                                 headers={"Authorization": "Bearer " + token, "Content-Type": ct})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def put_old(old):
    code, obj = call("GET")
    spec = {"protocol": "http"}
    if old is not None:
        spec["envoyExtensions"] = old
    if code == 404:
        code, obj = call("POST", {"apiVersion": "consul.hashicorp.com/v1alpha1", "kind": "ServiceDefaults",
                                  "metadata": {"name": "delta"}, "spec": spec})
    else:
        obj["spec"] = spec
        code, obj = call("PUT", obj)
    assert code in (200, 201), (code, obj)
    return obj


stats = {"cases": 0, "applied": 0, "refused_moved": {}, "bad": []}
with open(cases_file) as f:
    for n, line in enumerate(f):
        if n >= most:
            break
        c = json.loads(line)
        stats["cases"] += 1
        obj = put_old(c["old"])
        rv = obj["metadata"]["resourceVersion"]
        patch = c["patch"]
        patch[0]["value"] = rv
        if n % 10 == 9 and c["old"]:  # moved on first: a tenant's edit (the first entry dropped)
            moved = dict(obj)
            moved["spec"] = dict(obj["spec"], envoyExtensions=obj["spec"]["envoyExtensions"][1:])
            code, after = call("PUT", moved)
            assert code == 200, (code, after)
            code, out = call("PATCH", json.dumps(patch).encode(), "application/json-patch+json")
            stats["refused_moved"][str(code)] = stats["refused_moved"].get(str(code), 0) + 1
            _, now = call("GET")
            if code not in (409, 422) or now["spec"].get("envoyExtensions") != moved["spec"]["envoyExtensions"]:
                stats["bad"].append({"case": n, "moved_code": code, "message": out.get("message")})
            continue
        code, out = call("PATCH", json.dumps(patch).encode(), "application/json-patch+json")
        got = out.get("spec", {}).get("envoyExtensions") if code == 200 else None
        if code != 200 or got != c["new"]:
            stats["bad"].append({"case": n, "code": code, "message": out.get("message"), "got": got, "want": c["new"]})
        else:
            stats["applied"] += 1
print(json.dumps({k: (v[:3] if k == "bad" else v) for k, v in stats.items()} | {"bad_count": len(stats["bad"])}))
