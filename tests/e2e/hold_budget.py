"""Holds the webhook's memory budget for a while (tests/e2e/t_budget.sh): one request over TLS
whose declared body takes the whole budget (the HTTP layer reserves it, and decode_factor times
it, before reading it), trickled a byte a second so that the server neither reads it whole nor
cuts it for silence; closing the connection gives the budget back.
  hold_budget.py HOST PORT CA CONTENT_LENGTH SECONDS"""
import socket
import ssl
import sys
import time

host, port, ca, length, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
ctx = ssl.create_default_context(cafile=ca)
with socket.create_connection((host, port)) as raw, ctx.wrap_socket(raw, server_hostname=host) as s:
    s.sendall(b"POST /validate HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
              % (host.encode(), length))
    print("held", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        s.sendall(b" ")
        time.sleep(1)
