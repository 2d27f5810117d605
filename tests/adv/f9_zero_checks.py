"""ADV finding 9: the EnvoyFilter native check decodes a patch value again for each string member
that could be a zero (an enum-like "A"), up to 16 times (controller/meshes/istio/src/istio_native.c,
kMaxZeroChecks, sets_nothing: copy + to JSON + upb decode + encode of the WHOLE value each time),
not in po_Admission_Cost (which prices memory, and time not at all). The same value with and
without 17 such members beside a list of strings: the server's CPU seconds for one review.
  f9_zero_checks.py [LIST_ITEMS]  (default 380000). Exit 1 when the members cost over 3x."""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, post
from shapes import ef_review, cost
n = int(sys.argv[1]) if len(sys.argv) > 1 else 380000

def body(zn):
    zeros = b"".join(b'"z%02d":"A",' % i for i in range(zn))
    return ef_review(b'[{"applyTo":"CLUSTER","match":{"context":"SIDECAR_OUTBOUND"},"patch":{"operation":"MERGE","value":'
                     b'{"metadata":{"filter_metadata":{"x":{' + zeros + b'"l":[' + b",".join([b'"s"'] * n) + b']}}}}}}]')

def cpu(pid):
    f = open("/proc/%d/stat" % pid).read().split(")")[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

out = {}
for zn in (0, 17):
    b = body(zn)
    srv = Server(96, 8)
    c0 = cpu(srv.p.pid)
    st, _, secs = post(srv.port, b, timeout=120)
    out[zn] = cpu(srv.p.pid) - c0
    print("EnvoyFilter value with %2d enum-like members + %d strings: body %d B, priced %.1f MiB: %d in %.1f s wall, "
          "server CPU %.2f s" % (zn, n, len(b), cost(b) / 2**20, st, secs, out[zn]), flush=True)
    srv.stop()
sys.exit(1 if out[17] > 3 * max(out[0], 0.05) else 0)
