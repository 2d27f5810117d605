"""ADV finding 1 (critical): po_Review_Count (controller/webhook/src/review.c), which both bounds a
review (kMaxContainers/kMaxValues, 413) and prices it (po_Admission_Cost), scans double-quoted
strings only; json-c's tokener (not JSON_TOKENER_STRICT) also takes single-quoted strings and
/* */ comments. A '"' inside one of those makes the scan skip everything up to the next '"', so
a million `{}` behind it are neither bounded nor priced: ONE 3 MB review makes the server hold
~790 MiB under a 96 MiB budget (the 256Mi container is OOM-killed), and takes 3-5 s of CPU.
  f1_hidden_containers.py [quote|comment]...   Exit 1 when the peak passes budget + 32 MiB."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, post
from shapes import SHAPES, count, cost

bad = 0
for kind in sys.argv[1:] or ["quote", "comment"]:
    body = SHAPES[kind + "-hidden"]()
    srv = Server(96, 8)
    idle = srv.stats()["hwm_kb"]
    st, data, secs = post(srv.port, body, timeout=60)
    s = srv.stats()
    srv.stop()
    held = (s["hwm_kb"] - idle) / 1024
    c, v = count(body)
    print("%s-hidden: body %d B, counted %d containers / %d values (real: ~1,000,000 objects), priced %.1f MiB; "
          "answer %d in %.1f s; budget peak %.1f MiB; resident peak over idle %.1f MiB (budget 96)" % (
              kind, len(body), c, v, cost(body) / 2**20, st, secs, s["peak"] / 2**20, held))
    bad += held > 96 + 32
sys.exit(1 if bad else 0)
