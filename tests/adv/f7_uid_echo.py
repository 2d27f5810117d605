"""ADV finding 7: the answer echoes request.uid, and json-c writes each raw control character of
it (which its non-strict tokener accepted unescaped in the body) as a six-byte \\u00XX escape:
the answer is 6x the uid, built by json-c and copied again by the HTTP layer
(MHD_RESPMEM_MUST_COPY), past what po_Admission_Cost reserves (5 per body byte + 256 KiB).
K such reviews at once; the server's peak resident memory over its idle figure vs the budget.
  f7_uid_echo.py [K [UID_MB]]   (defaults 8, 3 MiB). Exit 1 when the peak passes budget + 32 MiB."""
import os, sys, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, post
from shapes import cost

k = int(sys.argv[1]) if len(sys.argv) > 1 else 8
uid = b"\x01" * int(float(sys.argv[2]) * 1e6 if len(sys.argv) > 2 else (3 << 20) - 200)
body = b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"' + uid + b'"}}'
srv = Server(96, 8)
idle = srv.stats()["hwm_kb"]
res = []
def client(i):
    t0 = time.monotonic()
    for a in range(11):
        st, d, _ = post(srv.port, body, timeout=60, src="127.0.0.%d" % (2 + i))
        if st != 429 or time.monotonic() - t0 > 9: break
        time.sleep(1)
    res.append((st, len(d)))
ts = [threading.Thread(target=client, args=(i,)) for i in range(k)]
[t.start() for t in ts]; [t.join() for t in ts]
s = srv.stats()
srv.stop()
held = (s["hwm_kb"] - idle) / 1024
print("body %d B (uid of raw 0x01), priced %.1f MiB; %d clients: answers %s; budget peak %.1f MiB; resident peak over idle %.1f MiB (budget 96)"
      % (len(body), cost(body) / 2**20, k, sorted(set(res)), s["peak"] / 2**20, held))
sys.exit(1 if held > 96 + 32 else 0)
