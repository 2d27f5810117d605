"""ADV finding 2: strict-JSON reviews whose decoding costs over twice what po_Admission_Cost
reserves: an EnvoyFilter (or PropertyOverride) whose patch value is a list of scalars (the
EnvoyFilter's native validation converts the value again). K such reviews sent at once, each
retried on 429 after a second as the API server does; the server's peak resident memory over its
idle figure is compared with the budget.
  f2_underestimate.py [K [FILL_MiB [KIND [UNIT]]]]  (defaults 8, 40, ef, "s")
Exit 1 when the peak passes the budget (plus 32 MiB of slack, test_webhook_load's kSteadyMiB)."""
import os, sys, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("ADV_FILL_MIB", sys.argv[2] if len(sys.argv) > 2 else "40")
from advlib import Server, post
from shapes import fill, ef_review, po_review, cost

k = int(sys.argv[1]) if len(sys.argv) > 1 else 8
kind = sys.argv[3] if len(sys.argv) > 3 else "ef"
u = (sys.argv[4] if len(sys.argv) > 4 else '"s"').encode()
if kind == "ef":
    mk = lambda n: ef_review(b'[{"applyTo":"CLUSTER","match":{"context":"SIDECAR_OUTBOUND"},"patch":{"operation":"MERGE","value":'
                             b'{"metadata":{"filter_metadata":{"x":{"l":[' + b','.join([u] * n) + b']}}}}}}]')
else:
    mk = lambda n: po_review(b'[{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add",'
                             b'"path":"/metadata/filter_metadata/x","value":{"l":[' + b','.join([u] * n) + b']}}]')
body = fill(mk)
srv = Server(96, 8)
idle = srv.stats()["hwm_kb"]
res = [None] * k
def client(i):
    t0 = time.monotonic()
    for a in range(11):
        st, _, _ = post(srv.port, body, timeout=30, src="127.0.0.%d" % (2 + i % 200))
        if st != 429 or time.monotonic() - t0 > 9:
            break
        time.sleep(1)
    res[i] = (st, a + 1, time.monotonic() - t0)
ts = [threading.Thread(target=client, args=(i,)) for i in range(k)]
[t.start() for t in ts]
[t.join() for t in ts]
s = srv.stats()
srv.stop()
held = (s["hwm_kb"] - idle) / 1024
print("kind=%s unit=%s body=%d B estimate=%.1f MiB clients=%d statuses=%s budget_peak=%.1f MiB rss_peak_over_idle=%.1f MiB (budget 96)"
      % (kind, u.decode(), len(body), cost(body) / 2**20, k, sorted(r[0] for r in res), s["peak"] / 2**20, held))
sys.exit(1 if held > 96 + 32 else 0)
