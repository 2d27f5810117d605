"""ADV finding 4b: a client that sends request headers declaring a body and closes its socket at
once (FIN, nothing more) leaves its budget reservation held for the whole silence timeout (5 s):
the server does not notice the end of the stream of a connection waiting for its body before
that timeout (libmicrohttpd, epoll). The attacker keeps no connection open and sends no body:
40 x 130 bytes reserve 49 MiB of the 96 MiB budget for 5 s.
(Measured with f4b_fire_and_forget.py: 480 such connections/s from 13 addresses keep 93 of 96 MiB
reserved; API-server-like retries of typical reviews still got through there, the gaps the
expiring reservations leave being enough; f4_hold.py, keeping the connections open, denies them.)
Exit 1 when anything is still reserved 1 s after the 40 clients closed."""
import os, socket, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, head
srv = Server(96, 8)
for i in range(40):
    s = socket.socket(); s.connect(("127.0.0.1", srv.port)); s.sendall(head(50000)); s.close()
t0 = time.monotonic()
seen = []
while time.monotonic() - t0 < 8:
    st = srv.stats()
    seen.append((round(time.monotonic() - t0, 1), round(st["inflight"] / 2**20, 1)))
    if not st["inflight"]: break
    time.sleep(0.5)
srv.stop()
print("after 40 clients sent headers (Content-Length 50000) and closed: (seconds, MiB still reserved) %s" % seen)
held_1s = [m for t, m in seen if t >= 1.0]
sys.exit(1 if held_1s and held_1s[0] > 0 else 0)
