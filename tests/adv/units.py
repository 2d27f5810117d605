"""ADV: which element shape in an EnvoyFilter / PropertyOverride value costs most over its estimate."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, post
from shapes import fill, ef_review, po_review
units = [b'{}', b'[]', b'1', b'"s"', b'{"a":1}', b'[[]]', b'{"a":{"b":1}}', b'true', b'1.5']
for kind in sys.argv[1:] or ["ef", "po"]:
    for u in units:
        if kind == "ef":
            mk = lambda n: ef_review(b'[{"applyTo":"CLUSTER","match":{"context":"SIDECAR_OUTBOUND"},"patch":{"operation":"MERGE","value":'
                                     b'{"metadata":{"filter_metadata":{"x":{"l":[' + b','.join([u] * n) + b']}}}}}}]')
        else:
            mk = lambda n: po_review(b'[{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add",'
                                     b'"path":"/metadata/filter_metadata/x","value":{"l":[' + b','.join([u] * n) + b']}}]')
        body = fill(mk)
        srv = Server(96, 8)
        idle = srv.stats()["hwm_kb"]
        st, data, secs = post(srv.port, body, timeout=60)
        s = srv.stats()
        srv.stop()
        held = (s["hwm_kb"] - idle) * 1024
        print("%s %-16s len=%7d st=%d secs=%.2f reserved=%.1fMiB held=%.1fMiB ratio=%.2f" % (
            kind, u.decode(), len(body), st, secs, s["peak"] / 2**20, held / 2**20, held / max(1, s["peak"])), flush=True)
