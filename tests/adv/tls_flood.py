"""ADV: TLS helpers against the real controller's webhook (e2e_flood_real.sh).
  tls_flood.py hold HOST PORT CA SECONDS CONNS LENGTH SRC_BASE NADDR
      CONNS connections (over NADDR source addresses from 127.0.0.SRC_BASE) each sending headers
      declaring LENGTH, then a byte every ~4 s, reconnecting as soon as one ends
  tls_flood.py hidden HOST PORT CA      one f1 quote-hidden review; prints the status"""
import os, socket, ssl, sys, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import head

mode, host, port, ca = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
ctx = ssl.create_default_context(cafile=ca)

def conn(src):
    raw = socket.socket()
    raw.bind((src, 0))
    raw.settimeout(5)
    raw.connect((host, port))
    return ctx.wrap_socket(raw, server_hostname=host)

if mode == "hidden":
    from shapes import SHAPES
    body = SHAPES["quote-hidden"]()
    s = conn("127.0.0.1")
    s.settimeout(60)
    s.sendall(head(len(body)) + body)
    d = b""
    while True:
        x = s.recv(65536)
        if not x: break
        d += x
    print(d[:12].decode(errors="replace"), flush=True)
    sys.exit(0)

secs, conns, length, base, naddr = float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8]), int(sys.argv[9])
stop = time.monotonic() + secs
count = [0]

def holder(i):
    src = "127.0.0.%d" % (base + i % naddr)
    while time.monotonic() < stop:
        try:
            s = conn(src)
            s.sendall(head(length))
            count[0] += 1
            s.settimeout(1)
            t0 = time.monotonic()
            while time.monotonic() < stop and time.monotonic() - t0 < 9.5:
                try:
                    if s.recv(1) == b"":
                        break
                    break  # an answer (429): reconnect
                except (socket.timeout, ssl.SSLError) as e:
                    if not isinstance(e, socket.timeout) and "timed out" not in str(e):
                        break
                if int(time.monotonic() - t0) % 4 == 3:
                    s.sendall(b" ")
                    time.sleep(1)
            s.close()
        except OSError:
            time.sleep(0.01)

ts = [threading.Thread(target=holder, args=(i,)) for i in range(conns)]
[t.start() for t in ts]
print("holding", flush=True)
[t.join() for t in ts]
print("connections %d" % count[0], flush=True)
