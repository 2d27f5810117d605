"""The controller benchmark's driver (bench_controller.sh runs it; /usr/bin/python3, loopback only).

  run      creates --count PropertyOverrides over --targets ServiceDefaults (po-NNNNNN -> svc-(i mod T)),
           as fast as one client can, then waits until the controller has settled and the cluster
           holds what it should, and prints one JSON report line (the fields: docs/benchmarks.md)
  restart  after bench_controller.sh restarted the controller on the same cluster: its ready time,
           when its workers started, what it reconciled, requeued and wrote until settled
  check    only the state check (exit 0: converged, 1: not, with the reason)

Convergence is two things, both required: the controller's last write is --quiet seconds old
(propertyoverride_last_write_time_seconds, or where a build lacks it the last change seen of
propertyoverride_writes_total / rest_client_requests_total's writes) with its workqueue empty, and
the state holds: every status is for its generation, every target holds exactly the entries of
the PropertyOverrides pointing at it at their generations. With more PropertyOverrides on a target
than it has room for (--cap, 100: docs/crd.md, TargetFull), a target holds exactly --cap of them
(a newcomer never evicts a live entry, so which ones depends on timing) and every other one says
Programmed False TargetFull. The state is read only once the controller is quiet: a poll of
100,000 objects is itself load on the API server."""
import argparse, http.client, json, os, ssl, sys, threading, time, urllib.parse, urllib.request

p = argparse.ArgumentParser()
p.add_argument("mode", choices=("run", "restart", "check"))
for a in ("--url", "--token", "--ca"):
    p.add_argument(a, required=True)
p.add_argument("--metrics", default="", help="the controller's /metrics URL (run, restart)")
p.add_argument("--pid", type=int, default=0, help="the controller's pid: CPU and RSS from /proc (run, restart)")
p.add_argument("--server-pids", default="", help="the API server's (and etcd's) pids, comma-separated")
p.add_argument("--ns", default="default")
p.add_argument("--count", type=int, default=2500)
p.add_argument("--targets", type=int, default=50)
p.add_argument("--cap", type=int, default=100)
p.add_argument("--rate", type=float, default=0, help="run: creates per second (0: as fast as one client can)")
p.add_argument("--quiet", type=float, default=8.0, help="seconds without a controller write that count as settled")
p.add_argument("--timeout", type=float, default=1800)
p.add_argument("--started", type=float, default=0, help="restart: when the new controller was started (Unix time)")
p.add_argument("--ready", type=float, default=0, help="restart: when its /readyz first answered 200 (Unix time)")
p.add_argument("--label", default="")
p.add_argument("--patches", choices=("same", "distinct"), default="same",
               help="run: every PropertyOverride of a target sets the same field of every outbound cluster (all "
                    "overlap: Overlapping, and each status names three peers), or each one its own upstream's "
                    "(resourceFilter.services: none overlap)")
args = p.parse_args()
if args.mode != "check" and not (args.metrics and args.pid):
    p.error("%s needs --metrics and --pid" % args.mode)
u = urllib.parse.urlsplit(args.url)
ctx = ssl.create_default_context(cafile=args.ca)
PO = "/apis/propertyoverride.io/v1alpha1/namespaces/%s/propertyoverrides" % args.ns
SD = "/apis/consul.hashicorp.com/v1alpha1/namespaces/%s/servicedefaults" % args.ns
HZ = os.sysconf("SC_CLK_TCK")


class Api:
    """One keep-alive connection, retried on 429/5xx and dropped connections."""
    def __init__(self):
        self.conn = None

    def call(self, method, path, body=None, ctype="application/json"):
        data = json.dumps(body).encode() if body is not None else None
        for i in range(60):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=120)
            try:
                self.conn.request(method, path, body=data, headers={"Authorization": "Bearer " + args.token,
                                                                    "Content-Type": ctype})
                r = self.conn.getresponse()
                out = r.read()
                if r.status in (429, 500, 502, 503, 504):
                    time.sleep(0.05 * (i + 1)); continue
                return r.status, json.loads(out or b"{}")
            except (OSError, http.client.HTTPException):
                self.conn.close(); self.conn = None; time.sleep(0.05 * (i + 1))
        raise SystemExit("bench: API unreachable for %s %s" % (method, path))

    def list(self, path):
        items, cont = [], ""
        while True:
            q = "?limit=5000" + ("&continue=" + urllib.parse.quote(cont) if cont else "")
            code, o = self.call("GET", path + q)
            if code != 200:
                raise SystemExit("bench: list %s: HTTP %s %s" % (path, code, o.get("message")))
            items += o.get("items") or []
            cont = (o.get("metadata") or {}).get("continue") or ""
            if not cont:
                return items


# ---- what the controller and the servers report ----

def metrics():
    """name{labels} -> value of every sample on the controller's /metrics ({} when unreachable)."""
    try:
        with urllib.request.urlopen(args.metrics, timeout=10) as r:
            text = r.read().decode()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, _, v = line.rpartition(" ")
            try:
                out[k] = float(v)
            except ValueError:
                pass
    return out


def msum(m, name, **labels):
    """Sum of a family's samples whose labels include these."""
    t = 0.0
    for k, v in m.items():
        if k == name or k.startswith(name + "{"):
            if all('%s="%s"' % (a, b) in k for a, b in labels.items()):
                t += v
    return t


def writes(m):
    """The controller's writes: its own counter, or, for a build without it, the REST client's
    non-GET requests (bench_controller.sh runs without leader election: no lease writes), Events
    excluded as far as the counter allows (they are POSTs and PATCHes of events: not separable)."""
    # The gauge is there from the start in a build that counts its writes (a counter with no
    # sample yet is not printed at all).
    if "propertyoverride_last_write_time_seconds" in m:
        return msum(m, "propertyoverride_writes_total"), "propertyoverride_writes_total"
    return sum(msum(m, "rest_client_requests_total", method=x) for x in ("POST", "PUT", "PATCH", "DELETE")), \
        "rest_client_requests_total (writes incl. Events)"


def reconciles(m):
    return msum(m, "controller_runtime_reconcile_total")


def requeues(m):
    return sum(msum(m, "controller_runtime_reconcile_total", result=r) for r in ("requeue", "requeue_after"))


def proc(pid):
    """(CPU seconds, VmRSS MB, VmHWM MB, of the CPU the kernel's seconds) of a process; None when it
    is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read().rsplit(")", 1)[1].split()
        cpu = (int(st[11]) + int(st[12])) / HZ
        rss = hwm = 0.0
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"): rss = int(line.split()[1]) / 1024
                if line.startswith("VmHWM:"): hwm = int(line.split()[1]) / 1024
        return cpu, rss, hwm, int(st[12]) / HZ
    except (OSError, IndexError, ValueError):
        return None


def load():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


class Sampler(threading.Thread):
    """Every 0.5 s: the controller's write count (the time it last changed, for builds without the
    last-write gauge), its workqueue depth, the load average and the servers' peak RSS."""
    def __init__(self):
        super().__init__(daemon=True)
        self.stop, self.loads, self.server_hwm = False, [], {}
        self.writes, self.changed = None, 0.0
        self.lock = threading.Lock()

    def run(self):
        while not self.stop:
            m = metrics()
            w, _ = writes(m)
            now = time.time()
            with self.lock:
                if m and w != self.writes:
                    self.writes, self.changed = w, now
                self.loads.append(load()[0])
            for pid in server_pids():
                p_ = proc(pid)
                if p_: self.server_hwm[pid] = max(self.server_hwm.get(pid, 0), p_[2])
            time.sleep(0.5)


def server_pids():
    return [int(x) for x in args.server_pids.split(",") if x]


def last_write(m, sampler):
    """Unix time of the controller's last write."""
    g = m.get("propertyoverride_last_write_time_seconds")
    if g is not None:
        return g, "gauge"
    with sampler.lock:
        return sampler.changed, "sampled"


# ---- the state check ----

def patches(i):
    f = {"resourceType": "cluster", "trafficDirection": "outbound"}
    if args.patches == "distinct":
        f["services"] = [{"name": "up-%06d" % i}]
    return [{"resourceFilter": f, "op": "add", "path": "/outlier_detection/max_ejection_percent", "value": 1 + i % 99}]


def state(api):
    """None when the cluster holds what it should, else why not; with the TargetFull count."""
    pos, sds = api.list(PO), api.list(SD)
    pointing, gens, full = {}, {}, set()
    for o in pos:
        n, g = o["metadata"]["name"], o["metadata"]["generation"]
        st = o.get("status") or {}
        if st.get("observedGeneration") != g:
            return "%s: status for generation %s, object at %s" % (n, st.get("observedGeneration"), g), 0
        prog = [c for c in st.get("conditions") or [] if c.get("type") == "Programmed"]
        if prog and prog[0].get("status") == "False" and prog[0].get("reason") == "TargetFull":
            full.add(n)
        elif st.get("programmedGeneration") != g:
            return "%s: programmed generation %s, object at %s (%s)" % (
                n, st.get("programmedGeneration"), g, prog[0].get("reason") if prog else "no Programmed condition"), 0
        pointing.setdefault(o["spec"]["targetRef"]["name"], set()).add(n)
        gens[n] = g
    held = {}
    for t in sds:
        for e in t["spec"].get("envoyExtensions") or []:
            mk = (e.get("arguments") or {}).get("PropertyOverride")
            if isinstance(mk, dict):
                held.setdefault(t["metadata"]["name"], {})[mk.get("name")] = mk.get("generation")
    for t in sorted(set(pointing) | set(held)):
        want, have = pointing.get(t, set()), held.get(t, {})
        for n, g in have.items():
            if n not in want: return "%s holds %s, which does not point at it" % (t, n), len(full)
            if g != gens[n]: return "%s holds %s@%s, object at %s" % (t, n, g, gens[n]), len(full)
            if n in full: return "%s holds %s, whose status says TargetFull" % (t, n), len(full)
        room = min(len(want), args.cap)
        if len(have) != room:
            return "%s holds %d of the %d pointing at it (room for %d)" % (t, len(have), len(want), room), len(full)
        missing = want - set(have) - full
        if missing:
            return "%s lacks %s, whose status says programmed" % (t, sorted(missing)[0]), len(full)
    if len(pos) != args.count:
        return "%d PropertyOverrides listed, %d created" % (len(pos), args.count), len(full)
    return None, len(full)


def settle(api, sampler, since):
    """Waits until quiet (the last write --quiet old, workqueue empty) and the state holds.
    Returns (ok, why, last write time, how it was read, TargetFull count, state checks)."""
    deadline, checked_at, checks, why, full = time.time() + args.timeout, None, 0, "never quiet", 0
    while time.time() < deadline:
        m = metrics()
        lw, how = last_write(m, sampler)
        lw = max(lw or 0, since)
        depth = msum(m, "workqueue_depth")
        quiet = m and time.time() - lw >= args.quiet and depth == 0
        if quiet and checked_at != lw:
            checked_at, checks = lw, checks + 1
            why, full = state(api)
            if why is None:
                return True, None, lw, how, full, checks
            print("bench: quiet since %.1f s but %s" % (time.time() - lw, why), file=sys.stderr, flush=True)
        elif quiet and time.time() - lw > 60 + args.quiet:
            checked_at = None  # quiet for a minute and still wrong: look again (a missed write?)
        time.sleep(0.5)
    return False, why, None, None, full, checks


def report(d):
    print(json.dumps(d, sort_keys=True), flush=True)


def run():
    api, sampler = Api(), Sampler()
    base_m, base_p = metrics(), proc(args.pid)
    if not base_m or not base_p:
        raise SystemExit("bench: the controller (pid %d, %s) is not running" % (args.pid, args.metrics))
    srv0 = {pid: proc(pid) for pid in server_pids()}
    load0 = load()
    sampler.start()
    t0 = time.time()
    for i in range(args.count):
        obj = {"apiVersion": "propertyoverride.io/v1alpha1", "kind": "PropertyOverride",
               "metadata": {"name": "po-%06d" % i, "namespace": args.ns},
               "spec": {"targetRef": {"name": "svc-%05d" % (i % args.targets)}, "patches": patches(i)}}
        if args.rate > 0:
            time.sleep(max(0.0, t0 + i / args.rate - time.time()))
        code, o = api.call("POST", PO, obj)
        if code != 201:
            raise SystemExit("bench: create po-%06d: HTTP %s %s" % (i, code, o.get("message")))
    t_created = time.time()
    print("bench: created %d PropertyOverrides over %d targets in %.1f s" % (args.count, args.targets, t_created - t0),
          file=sys.stderr, flush=True)
    ok, why, lw, how, full, checks = settle(api, sampler, t_created)
    sampler.stop = True
    m, pr = metrics(), proc(args.pid)
    n = max(args.count, 1)
    w, wsrc = writes(m)
    d = {"mode": "run", "label": args.label, "n": args.count, "targets": args.targets, "rate": args.rate,
         "patches": args.patches,
         "capped": args.count > args.targets * args.cap, "target_full": full, "converged": ok, "why": why,
         "create_s": round(t_created - t0, 2),
         "convergence_s": round(lw - t0, 2) if ok else None,
         "last_create_to_last_write_s": round(lw - t_created, 2) if ok else None,
         "last_write_from": how, "state_checks": checks,
         "cpu_s": round(pr[0] - base_p[0], 2), "cpu_ms_per_po": round((pr[0] - base_p[0]) * 1000 / n, 4),
         # the kernel's part (system calls: sockets, polls, futexes) of that CPU
         "cpu_sys_share": round((pr[3] - base_p[3]) / (pr[0] - base_p[0]), 3) if pr[0] > base_p[0] else None,
         "reconciles": reconciles(m) - reconciles(base_m),
         "reconciles_per_po": round((reconciles(m) - reconciles(base_m)) / n, 4),
         "writes": w - writes(base_m)[0], "writes_per_po": round((w - writes(base_m)[0]) / n, 4), "writes_from": wsrc,
         "requeues": requeues(m) - requeues(base_m),
         # every request the controller's REST client made, Events and reads included, per method
         "requests_per_po": {x: round((msum(m, "rest_client_requests_total", method=x) -
                                       msum(base_m, "rest_client_requests_total", method=x)) / n, 4)
                             for x in ("GET", "POST", "PUT", "PATCH", "DELETE")},
         # watch events that queued nothing, per PropertyOverride, by why (own-override-version: not even parsed)
         "ignored_per_po": {x: round((msum(m, "propertyoverride_watch_events_ignored_total", reason=x) -
                                      msum(base_m, "propertyoverride_watch_events_ignored_total", reason=x)) / n, 4)
                            for x in ("own-override-write", "own-override-version", "own-target-write", "unchanged")},
         # target keys queued, per PropertyOverride, by what queued them (one reconcile may answer several)
         "enqueues_per_po": {x: round((msum(m, "propertyoverride_reconcile_enqueues_total", reason=x) -
                                       msum(base_m, "propertyoverride_reconcile_enqueues_total", reason=x)) / n, 4)
                             for x in ("override", "override-moved", "override-related", "override-deleted", "target",
                                       "target-deleted", "mesh-object", "reconcile", "held-entry-gone", "leadership")},
         # reconciles of targets by what they read of the target (digest: not the object)
         "target_reads": {x: int(msum(m, "propertyoverride_target_reads_total", **{"from": x}) -
                                 msum(base_m, "propertyoverride_target_reads_total", **{"from": x}))
                          for x in ("digest", "digest-then-object", "object")},
         # AdmissionReviews the controller's webhook answered (none unless it is registered: --webhook)
         "admissions": int(msum(m, "propertyoverride_webhook_requests_total") -
                           msum(base_m, "propertyoverride_webhook_requests_total")),
         # of those, the mutating webhooks' answers by outcome (--mutating: finalized, a new
         # PropertyOverride given the finalizer in its create)
         "mutations": {x: int(msum(m, "propertyoverride_webhook_mutations_total", outcome=x) -
                              msum(base_m, "propertyoverride_webhook_mutations_total", outcome=x))
                       for x in ("finalized", "finalizer-kept", "patched", "unchanged", "exempt", "not-synced", "error")},
         # the controller's writes to PropertyOverrides themselves (finalizers), per PropertyOverride
         "override_writes_per_po": round((msum(m, "propertyoverride_writes_total", resource="propertyoverrides") -
                                          msum(base_m, "propertyoverride_writes_total", resource="propertyoverrides")) / n, 4),
         "rss_base_mb": round(base_p[1], 1), "rss_peak_mb": round(pr[2], 1),
         "rss_kb_per_po": round((pr[2] - base_p[1]) * 1024 / n, 2),
         "load_start": load0, "load_end": load(),
         "load_mean": round(sum(sampler.loads) / max(len(sampler.loads), 1), 2)}
    for pid in server_pids():
        p1, name = proc(pid), open("/proc/%d/comm" % pid).read().strip() if proc(pid) else str(pid)
        if p1 and srv0.get(pid):
            d["server_%s_cpu_s" % name] = round(p1[0] - srv0[pid][0], 1)
            d["server_%s_peak_mb" % name] = round(max(p1[2], sampler.server_hwm.get(pid, 0)), 1)
    report(d)
    return 0 if ok else 1


def restart():
    """The new controller (pid) was started at --started on a settled cluster: when it was ready,
    when its workers started, and everything it did until quiet."""
    api, sampler = Api(), Sampler()
    ready = args.ready or None
    at_ready = proc(args.pid)  # its CPU when it became ready: the cold start's, before any reconcile
    sampler.start()
    ok, why, lw, how, full, checks = settle(api, sampler, ready or time.time())
    sampler.stop = True
    m, pr = metrics(), proc(args.pid)
    started = m.get("propertyoverride_workers_start_time_seconds")
    w, wsrc = writes(m)
    d = {"mode": "restart", "label": args.label, "n": args.count, "targets": args.targets, "converged": ok, "why": why,
         "ready_s": round(ready - args.started, 2) if ready else None,
         "workers_start_s": round(started - args.started, 2) if started else None,
         "cache_sync_wait_s": m.get("propertyoverride_cache_sync_wait_seconds"),
         "unsynced_start_warned": None,  # filled in by bench_controller.sh from the log
         "reconciles": reconciles(m), "requeues": requeues(m),
         "retries": msum(m, "workqueue_retries_total"), "writes": w, "writes_from": wsrc,
         "events": msum(m, "propertyoverride_events_total", result="posted"),
         "cpu_s": round(pr[0], 2), "cpu_at_ready_s": round(at_ready[0], 2) if at_ready else None,
         "rss_peak_mb": round(pr[2], 1), "load_end": load(), "target_full": full}
    report(d)
    return 0 if ok else 1


def check():
    why, full = state(Api())
    print("converged (%d TargetFull)" % full if why is None else "not converged: " + why, flush=True)
    return 0 if why is None else 1


sys.exit({"run": run, "restart": restart, "check": check}[args.mode]())
