"""ADV: does a headers-only request with a declared body large enough for the trim (reservation
>= 8 MiB: Content-Length >= ~287 KB) make the server pay a malloc_trim(0) per connection?
Server CPU seconds for N such connections vs N with a small declared body."""
import os, socket, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, head
n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
heap = int(sys.argv[2]) if len(sys.argv) > 2 else 60
def cpu(pid):
    f = open("/proc/%d/stat" % pid).read().split(")")[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
for cl in (1000, 300000):
    srv = Server(96, 8, heap_mib=heap)
    c0 = cpu(srv.p.pid); t0 = time.monotonic()
    for i in range(n):
        s = socket.socket(); s.connect(("127.0.0.1", srv.port)); s.sendall(head(cl))
        s.close()
    t1 = time.monotonic()
    time.sleep(7)
    st = srv.stats()
    print("CL=%6d: %d headers-only connections in %.1f s, server CPU %.2f s, rss %d MiB, in flight after %d" % (
        cl, n, t1 - t0, cpu(srv.p.pid) - c0, st["rss_kb"] // 1024, st["inflight"]))
    srv.stop()
