"""Shared helpers of the adversarial reproducers (branch adv-admit): starts tests/adv/adv_server
(the real webhook server, plain HTTP) and sends raw HTTP requests."""
import os
import socket
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Server:
    def __init__(self, budget_mib=96, threads=8, build=None, heap_mib=0):
        build = build or os.environ.get("PO_BUILD", os.path.join(ROOT, "build"))
        self.p = subprocess.Popen([os.path.join(build, "tests/adv/adv_server"), str(budget_mib), str(threads), str(heap_mib)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  stderr=None if os.environ.get("ADV_VERBOSE") else subprocess.DEVNULL)
        self.port = int(self.p.stdout.readline())
        self.budget = budget_mib << 20

    def stats(self):
        self.p.stdin.write("s\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        return {k: int(v) for k, v in (kv.split("=") for kv in line.split())}

    def alive(self):
        return self.p.poll() is None

    def stop(self):
        try:
            self.p.stdin.close()
        except Exception:
            pass
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def head(length, path="/validate", extra=""):
    return (b"POST %s HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s"
            b"Connection: close\r\n\r\n" % (path.encode(), length, extra.encode()))


def post(port, body, timeout=30, src="127.0.0.1", path="/validate"):
    """(status, response bytes, seconds); status 0: closed without an answer."""
    t0 = time.monotonic()
    s = socket.socket()
    s.settimeout(timeout)
    s.bind((src, 0))
    try:
        s.connect(("127.0.0.1", port))
        try:
            s.sendall(head(len(body), path) + body)
        except OSError:
            pass
        data = b""
        while True:
            try:
                d = s.recv(1 << 16)
            except OSError:
                break
            if not d:
                break
            data += d
    finally:
        s.close()
    st = int(data[9:12]) if data.startswith(b"HTTP/1.") else 0
    return st, data, time.monotonic() - t0


def review(request_extra, uid="adv"):
    """An AdmissionReview v1 around request fields (a JSON text fragment, without braces)."""
    return (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"%s",%s}}'
            % (uid.encode(), request_extra))


TYPICAL = review(b'"kind":{"group":"propertyoverride.io","version":"v1alpha1","kind":"PropertyOverride"},'
                 b'"operation":"CREATE","namespace":"shop","object":{"apiVersion":"propertyoverride.io/v1alpha1",'
                 b'"kind":"PropertyOverride","metadata":{"name":"p","namespace":"shop"},"spec":{"targetRef":'
                 b'{"kind":"ServiceDefaults","name":"api"},"patches":[{"resourceFilter":{"resourceType":"cluster",'
                 b'"trafficDirection":"outbound"},"op":"add","path":"/connect_timeout","value":"2s"}]}}')
