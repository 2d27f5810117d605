"""ADV finding 3: a review whose decoding cost (po_Admission_Cost) is over 7/8 of the budget but
within it is answered 429 "busy" on an idle server, every time: the HTTP layer's up-front
reservation of the same request already counts as in flight when po_HttpRequest_Reserve asks for
the rest, so the "one alone may take it all" rule of po_Budget_TryAcquire never applies. The API
server retries it 10 times and the write fails with a timeout instead of being decided (200) or
refused for good (413). Exit 1 when the idle server answers 429 three times out of three."""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["ADV_FILL_MIB"] = "96"
from advlib import Server, post
from shapes import SHAPES, cost
body = SHAPES["po-struct-value"]()
srv = Server(96, 8)
sts = []
for _ in range(3):
    st, data, _ = post(srv.port, body)
    sts.append(st)
    time.sleep(1.1)
s = srv.stats()
srv.stop()
print("body=%d B cost=%.1f MiB (7/8 of budget = 84 MiB, budget 96) statuses on an idle server=%s inflight_after=%d refusals=%d"
      % (len(body), cost(body) / 2**20, sts, s["inflight"], s["refusals"]))
sys.exit(1 if sts.count(429) == 3 else 0)
