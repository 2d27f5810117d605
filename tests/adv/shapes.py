"""ADV: what one review of a given shape makes the webhook server hold (peak resident memory of a
fresh adv_server, over its idle figure) against what it reserved for it (the budget's peak).
  shapes.py [NAME...]"""
import json
import sys
import os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, post, review

MAXB = 3 << 20


def scan(body):
    """po_Review_Count (controller/webhook/src/review.c), the same scan: (containers, values,
    in_value_containers, in_value_values, escaped_envoy, bad), bad the offset of what strict JSON
    refuses (None when nothing)."""
    containers = values = inc = inv = 0
    depth, vdepth = 0, None
    in_string = in_scalar = last_key = after_key = escapes = string_u = False
    start = 0
    i, n = 0, len(body)
    scalar_chars = set(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-+.")
    while i < n:
        c = body[i]
        if in_string:
            if c == 0x5c:
                if i + 1 < n and body[i + 1] == 0x75:
                    string_u = True
                i += 1
            elif c == 0x22:
                in_string = False
                last_key = body[start:i] in (b"value", b"Value")
                if string_u and i - start <= 96:
                    try:
                        d = json.loads(b'"' + body[start:i] + b'"')
                    except ValueError:
                        d = ""
                    last_key = d in ("value", "Value")
                    escapes = escapes or "Envoy" in d
            elif c < 0x20:
                return 0, 0, 0, 0, escapes, i
            i += 1
            continue
        scalar = c in scalar_chars
        starts = (scalar and not in_scalar) or c in b'"{['
        in_scalar = scalar
        if starts:
            values += 1
            inside = vdepth is not None or after_key
            inv += inside
            if c in b"{[":
                containers += 1
                inc += inside
                if after_key and vdepth is None:
                    vdepth = depth
                depth += 1
            after_key = False
            if c == 0x22:
                in_string = True
                string_u = False
                start = i + 1
            i += 1
            continue
        if not scalar:
            if c in b"}]":
                depth = max(depth - 1, 0)
                if depth == vdepth:
                    vdepth = None
            elif c == 0x3a:
                after_key = last_key
            elif c not in b", \t\r\n":
                return 0, 0, 0, 0, escapes, i
            if c != 0x3a:
                last_key = False
        i += 1
    return containers, values, inc, inv, escapes, None


def count(body):
    c, v, _, _, _, _ = scan(body)
    return c, v


def cost(body):
    """po_Admission_Cost (controller/webhook/src/admission.c)."""
    c, v, ic, iv, esc, bad = scan(body)
    if bad is not None:
        return 256 << 10
    k = (256 << 10) + len(body) * 5 + c * 1024 + v * 96 + iv * 112
    if esc or b"Envoy" in body:
        k += ic * 200 + iv * 300
    return k


def admissible(body, budget=int(os.environ.get("ADV_FILL_MIB", "96")) << 20):
    """Within max_body, the count's bounds and, whole, the budget: what the server decodes."""
    c, v = count(body)
    return (len(body) <= MAXB - 4096 and c <= 100000 and v <= 400000
            and cost(body) + len(body) + (64 << 10) + 1 <= budget)


def fill(make, limit=MAXB - 4096):
    """The largest n (bisection) whose make(n) is admissible (limit: bytes, for the hidden ones)."""
    lo, hi = 1, 1 << 21
    while lo < hi:
        mid = (lo + hi + 1) // 2
        b = make(mid)
        if len(b) <= limit and (limit != MAXB - 4096 or admissible(b)):
            lo = mid
        else:
            hi = mid - 1
    return make(lo)


def po_review(patches_json):
    return review(b'"kind":{"group":"propertyoverride.io","version":"v1alpha1","kind":"PropertyOverride"},'
                  b'"operation":"CREATE","namespace":"shop","object":{"apiVersion":"propertyoverride.io/v1alpha1",'
                  b'"kind":"PropertyOverride","metadata":{"name":"p","namespace":"shop"},"spec":{"targetRef":'
                  b'{"kind":"ServiceDefaults","name":"api"},"patches":' + patches_json + b'}}')


def ef_review(cps_json):
    return review(b'"kind":{"group":"networking.istio.io","version":"v1alpha3","kind":"EnvoyFilter"},'
                  b'"operation":"CREATE","namespace":"shop","object":{"apiVersion":"networking.istio.io/v1alpha3",'
                  b'"kind":"EnvoyFilter","metadata":{"name":"e","namespace":"shop"},"spec":{"configPatches":'
                  + cps_json + b'}}')


def epp_review(jps_json):
    return review(b'"kind":{"group":"gateway.envoyproxy.io","version":"v1alpha1","kind":"EnvoyPatchPolicy"},'
                  b'"operation":"CREATE","namespace":"shop","object":{"apiVersion":"gateway.envoyproxy.io/v1alpha1",'
                  b'"kind":"EnvoyPatchPolicy","metadata":{"name":"e","namespace":"shop"},"spec":{"type":"JSONPatch",'
                  b'"targetRef":{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"g"},"jsonPatches":'
                  + jps_json + b'}}')


def nested(depth_containers):
    """A value with n objects nested in a list (within the container bound)."""
    return b'[' + b','.join([b'{"a":{"b":1}}'] * depth_containers) + b']'


SHAPES = {
    # containers and values hidden from po_Review_Count inside a single-quoted string (json-c's
    # non-strict mode takes it as a string; the count sees '"' open a double-quoted one)
    "quote-hidden": lambda: fill(lambda n: review(b'"pad":[\'"\'' + b',{}' * n + b',\'"\']'), MAXB - 4095),
    # the same behind a comment: /* " */
    "comment-hidden": lambda: fill(lambda n: review(b'"pad":[/* " */' + b'{},' * n + b'{} /* " */]'), MAXB - 4095),
    # PropertyOverride, many patches, each invalid (misspelled field: a did-you-mean)
    "po-invalid-patches": lambda: fill(lambda n: po_review(b'[' + b','.join(
        [b'{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add",'
         b'"path":"/outlier_detection/max_ejection_percnt%d","value":1}' % i for i in range(n)]) + b']')),
    # PropertyOverride: one patch whose value is a huge Struct (filter_metadata)
    "po-struct-value": lambda: fill(lambda n: po_review(
        b'[{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add",'
        b'"path":"/metadata/filter_metadata/x","value":{"l":' + nested(n) + b'}}]'), MAXB - 4096),
    # EnvoyFilter: configPatches with a big nested value (native validation)
    "ef-nested-value": lambda: fill(lambda n: ef_review(
        b'[{"applyTo":"CLUSTER","match":{"context":"SIDECAR_OUTBOUND"},"patch":{"operation":"MERGE","value":'
        b'{"metadata":{"filter_metadata":{"x":{"l":' + nested(n) + b'}}}}}}]')),
    # EnvoyFilter: many configPatches, each invalid
    "ef-invalid-patches": lambda: fill(lambda n: ef_review(b'[' + b','.join(
        [b'{"applyTo":"CLUSTER","match":{"context":"SIDECAR_OUTBOUND"},"patch":{"operation":"MERGE",'
         b'"value":{"connect_timeoutt%d":"1s"}}}' % i for i in range(n)]) + b']')),
    # EnvoyPatchPolicy: many jsonPatches, each invalid
    "epp-invalid-patches": lambda: fill(lambda n: epp_review(b'[' + b','.join(
        [b'{"type":"type.googleapis.com/envoy.config.cluster.v3.Cluster","name":"c","operation":'
         b'{"op":"add","path":"/connect_timeoutt%d","value":"1s"}}' % i for i in range(n)]) + b']')),
    # wide object: many distinct keys
    "wide-object": lambda: fill(lambda n: review(b'"pad":{' + b','.join(b'"k%d":1' % i for i in range(n)) + b'}')),
    # strings of \u escapes
    "escapes": lambda: fill(lambda n: review(b'"pad":"' + b'\\u00e9' * n + b'"')),
    # many numbers as doubles
    "doubles": lambda: fill(lambda n: review(b'"pad":[' + b','.join([b'1.5e300'] * n) + b']')),
}

if __name__ == "__main__":
    names = sys.argv[1:] or list(SHAPES)
    for name in names:
        body = SHAPES[name]()
        srv = Server(96, 8)
        idle = srv.stats()["hwm_kb"]
        st, data, secs = post(srv.port, body, timeout=60)
        s = srv.stats()
        alive = srv.alive()
        srv.stop()
        over = s["hwm_kb"] * 1024 - idle * 1024
        print("%-22s len=%7d status=%3d secs=%5.2f reserved_peak=%6.1fMiB held=%7.1fMiB ratio=%5.2f resp=%dB %s" % (
            name, len(body), st, secs, s["peak"] / 2**20, over / 2**20, over / max(s["peak"], 1), len(data),
            data[data.find(b"\r\n\r\n") + 4:][:100]), flush=True)
