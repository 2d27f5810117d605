"""ADV probe: requests whose reservation stays under the 8 MiB trim threshold (no malloc_trim),
in waves of different shapes on 8 server threads: does glibc's per-thread arena retention push
resident memory past the budget?  probe_arenas.py [CLIENTS [WAVES]]"""
import os, sys, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, post, review
from shapes import cost
n = int(sys.argv[1]) if len(sys.argv) > 1 else 32
waves = int(sys.argv[2]) if len(sys.argv) > 2 else 6
shapes = [
    review(b'"pad":[' + b",".join([b"1"] * 50000) + b"]"),
    review(b'"pad":[' + b",".join([b"{}"] * 6000) + b"]"),
    review(b'"pad":[' + b",".join([b'"abcdefghijklmnopqrstuvwxyz%d"' % i for i in range(20000)]) + b"]"),
    review(b'"pad":{' + b",".join([b'"k%d":[1,2]' % i for i in range(15000)]) + b"}"),
]
for b in shapes:
    print("shape len %d reserve %.1f MiB" % (len(b), (cost(b) + len(b) + 65537) / 2**20))
srv = Server(96, 8)
idle = srv.stats()["hwm_kb"]
for w in range(waves):
    body = shapes[w % len(shapes)]
    res = []
    def c(i):
        t0 = time.monotonic()
        for a in range(11):
            st, _, _ = post(srv.port, body, src="127.0.0.%d" % (2 + i))
            if st != 429 or time.monotonic() - t0 > 9: break
            time.sleep(0.2)
        res.append(st)
    ts = [threading.Thread(target=c, args=(i,)) for i in range(n)]
    [t.start() for t in ts]; [t.join() for t in ts]
    s = srv.stats()
    print("wave %d: %s; rss %.1f MiB, peak rss over idle %.1f MiB, budget peak %.1f MiB" % (
        w, {x: res.count(x) for x in set(res)}, s["rss_kb"] / 1024, (s["hwm_kb"] - idle) / 1024, s["peak"] / 2**20), flush=True)
srv.stop()
