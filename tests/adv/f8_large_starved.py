"""ADV finding 8 (probe): a maximal review (a ServiceDefaults at both limits, tests/webhook/reviews.c's
"maximal", 2.9 MB) reserves 64 KiB + 29 x its body up front, 80 MiB: over budget/64, it fits only
while the bytes in flight stay within 7/8 of the budget minus itself, i.e. at most ~3.9 MiB held
by others. Typical reviews from C clients in a loop (the API server's other traffic, and each one
briefly reserving ~340 KiB with its 256 KiB fixed cost) keep that much in flight: does the
maximal one, retried on 429 as the API server does, get through within the 5 s webhook timeout?
  f8_large_starved.py [TYPICAL_CLIENTS [SECONDS]]  (defaults 16, 8). Exit 1 when it does not."""
import os, sys, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from advlib import Server, post, review, TYPICAL

def service_defaults(value, field):
    ext = []
    for e in range(100):
        ps = ",".join('{"ResourceFilter":{"ResourceType":"cluster","TrafficDirection":"outbound"},'
                      '"Op":"add","Path":"/outlier_detection/%s","Value":%d}' % (field, value) for i in range(100))
        ext.append('{"name":"builtin/property-override","arguments":{"Patches":[%s]}}' % ps)
    return ('{"apiVersion":"consul.hashicorp.com/v1alpha1","kind":"ServiceDefaults","metadata":{"name":"api",'
            '"namespace":"default"},"spec":{"envoyExtensions":[%s]}}' % ",".join(ext))

maximal = review(('"kind":{"group":"consul.hashicorp.com","version":"v1alpha1","kind":"ServiceDefaults"},'
                  '"operation":"UPDATE","namespace":"default","object":%s,"oldObject":%s'
                  % (service_defaults(50, "max_ejection_percent"), service_defaults(40, "max_ejection_percent"))).encode())
n = int(sys.argv[1]) if len(sys.argv) > 1 else 16
secs = float(sys.argv[2]) if len(sys.argv) > 2 else 8
srv = Server(96, 8)
stop = time.monotonic() + secs
done = [0]
def typical(i):
    while time.monotonic() < stop:
        post(srv.port, TYPICAL, src="127.0.0.%d" % (2 + i))
        done[0] += 1
ts = [threading.Thread(target=typical, args=(i,)) for i in range(n)]
[t.start() for t in ts]
time.sleep(1)
t0 = time.monotonic(); att = 0
while True:
    att += 1
    st, _, _ = post(srv.port, maximal, src="127.0.0.250")
    if st != 429 or time.monotonic() - t0 > 4: break
    time.sleep(1)
el = time.monotonic() - t0
[t.join() for t in ts]
srv.stop()
print("maximal review (%d B) beside %d looping typical clients (%d typical answered in %.0f s): status %d after %d attempts, %.1f s"
      % (len(maximal), n, done[0], secs, st, att, el))
sys.exit(1 if st != 200 or el > 5 else 0)
