"""The "cluster network" of the real kube-apiserver in tests (scripts/lib/real-cluster.sh).

A webhook configured with a Service (as deploy/ and the chart ship it) is dialled by the API
server at the Service's cluster IP, where no kube-proxy listens here. The API server's egress
selector sends that traffic ("cluster" network context) through an HTTP CONNECT proxy on a Unix
socket: this one. For `CONNECT ip:port` it finds the Service whose clusterIP and port those are
(a list of Services through the API) and tunnels to the loopback address mapped to that Service
(`--map ns/name=127.0.0.1:port`, the local API server's --webhook-service); a loopback
destination (URL webhooks at https://127.0.0.1:...) is tunnelled unchanged; anything else is
refused with 502. Nothing leaves loopback. Run by /usr/bin/python3.
"""
import argparse, http.client, json, os, socket, socketserver, ssl, sys, threading, urllib.parse

p = argparse.ArgumentParser()
p.add_argument("--socket", required=True)
p.add_argument("--url", required=True)
p.add_argument("--token", required=True)
p.add_argument("--ca", required=True)
p.add_argument("--map", action="append", default=[], help="ns/name=host:port")
args = p.parse_args()
mapping = {}
for m in args.map:
    svc, _, addr = m.partition("=")
    host, _, port = addr.rpartition(":")
    if "/" not in svc or not host or not port.isdigit():
        sys.exit("real-cluster-proxy: --map wants ns/name=host:port, not '%s'" % m)
    mapping[svc] = (host, int(port))
api = urllib.parse.urlsplit(args.url)
ctx = ssl.create_default_context(cafile=args.ca)


def log(msg):
    print("real-cluster-proxy: " + msg, file=sys.stderr, flush=True)


def service_at(ip, port):
    """ns/name of the Service with that cluster IP and port, or None."""
    c = http.client.HTTPSConnection(api.hostname, api.port, context=ctx, timeout=10)
    try:
        c.request("GET", "/api/v1/services", headers={"Authorization": "Bearer " + args.token})
        r = c.getresponse()
        body = r.read()
        if r.status != 200:
            log("list services: HTTP %d" % r.status)
            return None
    finally:
        c.close()
    for s in json.loads(body).get("items") or []:
        spec = s.get("spec") or {}
        if spec.get("clusterIP") == ip and any(pp.get("port") == port for pp in spec.get("ports") or []):
            return "%s/%s" % (s["metadata"]["namespace"], s["metadata"]["name"])
    return None


def pump(src, dst):
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            dst.sendall(b)
    except OSError:
        pass
    finally:
        for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            try:
                s.shutdown(how)
            except OSError:
                pass


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        conn, head = self.request, b""
        while b"\r\n\r\n" not in head:
            b = conn.recv(4096)
            if not b or len(head) > 16384:
                return
            head += b
        head, _, rest = head.partition(b"\r\n\r\n")
        words = head.split(b"\r\n")[0].decode("latin-1").split()
        if len(words) != 3 or words[0] != "CONNECT":
            conn.sendall(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
            return
        host, _, port = words[1].rpartition(":")
        host = host.strip("[]")
        target = None
        if host in ("127.0.0.1", "::1", "localhost"):
            target = (host, int(port))
        else:
            svc = service_at(host, int(port))
            target = mapping.get(svc) if svc else None
            log("CONNECT %s -> Service %s -> %s" % (words[1], svc, target))
        if target is None:
            conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\n\r\n")
            return
        try:
            up = socket.create_connection(target, timeout=10)
        except OSError as e:
            log("CONNECT %s: %s" % (words[1], e))
            conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\n\r\n")
            return
        up.settimeout(None)
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if rest:
            up.sendall(rest)
        t = threading.Thread(target=pump, args=(up, conn), daemon=True)
        t.start()
        pump(conn, up)
        t.join()
        up.close()


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


if os.path.exists(args.socket):
    os.unlink(args.socket)
with Server(args.socket, Handler) as srv:
    srv.serve_forever()
