import os, socket, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, TYPICAL
srv = Server(96, 8)
big = TYPICAL + b" " * 2000000
def raw(req, label):
    s = socket.socket(); s.settimeout(5); s.connect(("127.0.0.1", srv.port)); s.sendall(req)
    d = b""
    try:
        while True:
            x = s.recv(65536)
            if not x: break
            d += x
    except OSError: pass
    s.close()
    print(label, d[:40], d[d.find(b"\r\n\r\n")+4:][:120], srv.stats())
raw(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % (len(TYPICAL), len(big)) + big, "dupCL small-first")
raw(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % (len(big), len(TYPICAL)) + TYPICAL, "dupCL big-first")
raw(b"POST /validate HTTP/1.0\r\nHost: x\r\n\r\n" + big, "http1.0 noCL")
raw(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: +%d\r\nConnection: close\r\n\r\n" % len(TYPICAL) + TYPICAL, "plus")
raw(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length:  %d \r\nConnection: close\r\n\r\n" % len(TYPICAL) + TYPICAL, "spaces")
raw(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 1,%d\r\nConnection: close\r\n\r\n" % len(TYPICAL) + TYPICAL, "comma")
raw(b"POST /validate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(big) + big, "TE identity")
raw(b"POST /validate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity, chunked\r\nConnection: close\r\n\r\n" + b"10\r\n" + b"x"*16 + b"\r\n0\r\n\r\n", "TE id,chunked")
raw(b"POST /validate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n\r\n" + b"10\r\n" + b"x"*16 + b"\r\n0\r\n\r\n", "TE Chunked")
raw(b"POST /validate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + b"10\r\n" + b"x"*16 + b"\r\n0\r\n\r\n", "TE dup")
srv.stop()
