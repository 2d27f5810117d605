"""ADV: a body sent to a path the webhook does not serve (404) keeps the up-front estimate
(po_HttpRequest_Reserve is never called), so a 300 KB POST /x reserves ~8.8 MiB and each one
ends with malloc_trim(0). Server CPU per request with a fragmented heap standing in for the
controller's caches, vs the same body to /validate."""
import os, socket, sys, time, threading
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, post
n = int(sys.argv[1]) if len(sys.argv) > 1 else 400
heap = int(sys.argv[2]) if len(sys.argv) > 2 else 60
def cpu(pid):
    f = open("/proc/%d/stat" % pid).read().split(")")[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
body = b"x" * 300000
for path in ("/validate", "/x"):
    srv = Server(96, 8, heap_mib=heap)
    c0 = cpu(srv.p.pid); t0 = time.monotonic(); sts = {}
    def w(k):
        for i in range(k):
            st, _, _ = post(srv.port, body, path=path); sts[st] = sts.get(st, 0) + 1
    ts = [threading.Thread(target=w, args=(n // 4,)) for _ in range(4)]
    [t.start() for t in ts]; [t.join() for t in ts]
    el = time.monotonic() - t0
    st = srv.stats()
    print("POST %-9s x%d (300 KB, heap %d MiB): %.1f s, %.0f req/s, server CPU %.2f s (%.2f ms/req), statuses %s, peak reserved %.1f MiB" % (
        path, n, heap, el, n / el, cpu(srv.p.pid) - c0, (cpu(srv.p.pid) - c0) * 1000 / n, sts, st["peak"] / 2**20))
    srv.stop()
