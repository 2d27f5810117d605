"""ADV (held): the budget's bytes in flight return to 0 after thousands of aborted requests:
headers then close, half a body then close or RST, a whole body then close before the answer,
Content-Length larger than the body then close, smaller than the body, chunked, Expect:
100-continue then nothing, a declared length over max_body, garbage Content-Length.
  h_leak.py [N [PARALLEL]]  (defaults 3000, 1). Exit 1 when anything stays in flight."""
import os, socket, struct, sys, time, random
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, head, TYPICAL

n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
srv = Server(96, 8)
big = TYPICAL + b" " * 200000

def once(kind):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", srv.port))
        if kind == 0: s.sendall(head(len(big)))
        elif kind == 1: s.sendall(head(len(big)) + big[:len(big) // 2])
        elif kind == 2:
            s.sendall(head(len(big)) + big[:len(big) // 2])
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        elif kind == 3: s.sendall(head(len(big)) + big)
        elif kind == 4: s.sendall(head(len(big) + 1000) + big)
        elif kind == 5: s.sendall(head(len(TYPICAL) - 10) + TYPICAL); s.recv(100)
        elif kind == 6: s.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
        elif kind == 7: s.sendall(head(len(big), extra="Expect: 100-continue\r\n"))
        elif kind == 8: s.sendall(head(1 << 40))
        elif kind == 9: s.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 12x\r\n\r\n" + TYPICAL)
        elif kind == 10: s.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nContent-Length: 200000\r\n\r\n" + big[:1000])
        elif kind == 11: s.sendall(head(len(big)) + big[:1000]); s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    finally:
        s.close()

import threading
par = int(sys.argv[2]) if len(sys.argv) > 2 else 1
t0 = time.monotonic()
done = [0]
def worker(w):
    for i in range(w, n, par):
        once(i % 12)
        done[0] += 1
        if time.monotonic() - t0 > 60: break
ws = [threading.Thread(target=worker, args=(w,)) for w in range(par)]
[t.start() for t in ws]; [t.join() for t in ws]
i = done[0] - 1
for _ in range(30):
    time.sleep(0.5)
    st = srv.stats()
    if st["inflight"] == 0: break
print("aborted requests: %d in %.1f s; in flight after: %d bytes (peak %.1f MiB); server alive: %s" % (
    i + 1, time.monotonic() - t0, st["inflight"], st["peak"] / 2**20, srv.alive()))
srv.stop()
sys.exit(1 if st["inflight"] else 0)
