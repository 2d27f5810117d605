"""Holds the webhook's memory budget for a while (tests/e2e/t_budget.sh) as only real bytes can:
a body reserves what has arrived, not what it declares (headers alone hold nothing), so CONNS
connections over TLS each send all but the last byte of a small body (LENGTH declared: its
reservation, 64 KiB of buffers and the body in 64 KiB steps, stays under budget/64), and before
the server's body deadline (5 s + 1 s per MiB) each closes and sends again at once, until
SECONDS have passed; closing the connections gives the budget back. The connections renew at
staggered moments, so that what is free at any moment (one connection's 128 KiB) is less than a
review needs; more connections than fit stand by to take what is freed.
  hold_budget.py HOST PORT CA LENGTH SECONDS CONNS"""
import socket
import ssl
import sys
import threading
import time

host, port, ca, length, seconds, conns = (sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]),
                                          float(sys.argv[5]), int(sys.argv[6]))
ctx = ssl.create_default_context(cafile=ca)
end = time.monotonic() + seconds
head = (b"POST /validate HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        % (host.encode(), length))
ready = threading.Barrier(conns + 1)


def hold(i):
    first = True
    pause = 0.5 + i / conns  # the first renewal: staggered over a second
    while time.monotonic() < end:
        try:
            with socket.create_connection((host, port)) as raw, ctx.wrap_socket(raw, server_hostname=host) as s:
                s.sendall(head + b" " * (length - 1))
                if first:
                    first = False
                    ready.wait()
                time.sleep(min(pause, max(0.0, end - time.monotonic())))
                pause = 1.5
        except OSError:
            time.sleep(0.01)
    if first:
        ready.wait()


ts = [threading.Thread(target=hold, args=(i,)) for i in range(conns)]
[t.start() for t in ts]
ready.wait()
print("held", flush=True)
[t.join() for t in ts]
