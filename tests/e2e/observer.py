"""The never-regress observer: one long-running process that watches every ServiceDefaults,
ProxyDefaults and PropertyOverride (all namespaces), records every revision, and at the end
judges them in resourceVersion order. Run by /usr/bin/python3 through tests/e2e/lib.sh
(obs_start / obs_mark / obs_stop); loopback only.

A revision of a target is a violation when it
  (a) DELETES the target while a PropertyOverride points at it, is not being deleted, and its
      status says a generation of it is live in that target;
  (b) drops (or turns back to an older generation) the entry of such a PropertyOverride that the
      previous revision of the same target held. Legitimate transitions are not flagged: a newer
      generation replacing the entry keeps an entry for it; a PropertyOverride being deleted, gone,
      retargeted, or whose status never said anything was live in this target, is not judged;
  (c) carries a builtin/property-override entry the engine refuses: every distinct entry seen is
      checked at the end, in one batch, by `propertyoverride validate -f` (the webhook's check).

An entry belongs to a PropertyOverride when its marker (arguments.PropertyOverride) names it and,
where the marker carries uids, its uid is the PropertyOverride's and its targetUID the target's
(so forged or copied entries are never counted as the controller's).

A watch that ends is resumed from the last resourceVersion seen. A 410 means revisions were
compacted away: the kind is listed again and diffed; what changed in the gap is recorded but not
judged (nobody saw the intermediate revisions), and the count of such revisions is reported.

Control (files in --dir): `ready` is written once the first lists are recorded; `relists` gets
a line per 410 handled; `marks` holds
"RV label" lines that split the run into phases for the figures; writing `stop` (a
resourceVersion) makes it catch up to that version, judge, print the report, write
summary.json and exit: 0 nothing regressed, 1 violations, 2 the observer itself failed.
"""
import argparse, http.client, json, os, re, socket, ssl, subprocess, sys, threading, time, urllib.parse

p = argparse.ArgumentParser()
for a in ("--url", "--token", "--ca", "--dir", "--validator"):
    p.add_argument(a, required=True)
p.add_argument("--catchup-timeout", type=float, default=60)
p.add_argument("--watch-seconds", type=int, default=240, help="timeoutSeconds of each watch (it is then resumed)")
args = p.parse_args()

KINDS = {  # name: (api path, role)
    "ServiceDefaults": ("/apis/consul.hashicorp.com/v1alpha1/servicedefaults", "target"),
    "ProxyDefaults": ("/apis/consul.hashicorp.com/v1alpha1/proxydefaults", "target"),
    "PropertyOverride": ("/apis/propertyoverride.io/v1alpha1/propertyoverrides", "po"),
}
EXTENSION = "builtin/property-override"
url = urllib.parse.urlsplit(args.url)
ctx = ssl.create_default_context(cafile=args.ca)
lock = threading.Lock()
records = []      # (rv, order, seq, kind, type, key, summary, exact, gap, lo)
entries = {}      # canonical entry JSON -> (kind, rv, "ns/name")
watermark = {}    # kind -> newest resourceVersion its stream has reached
relists = {}      # kind -> 410s handled
failure = []      # fatal errors of the watch threads
seq = [0]
catchup = threading.Event()  # set at stop: watches become short and each first freshens the cache
watching = {}     # kind -> the connection of its open watch (closed at stop to restart it short)


def log(msg):
    print("observer: " + msg, file=sys.stderr, flush=True)


def get(o, *path):
    for k in path:
        if not isinstance(o, dict):
            return None
        o = o.get(k)
    return o


def connect():
    if url.scheme == "https":
        return http.client.HTTPSConnection(url.hostname, url.port, context=ctx, timeout=30)
    return http.client.HTTPConnection(url.hostname, url.port, timeout=30)


def request(path):
    """GET with retries on throttling, server errors and dropped connections (faults are injected
    into every /apis request, ours included). Returns (status, response, connection)."""
    for i in range(200):
        c = connect()
        try:
            c.request("GET", path, headers={"Authorization": "Bearer " + args.token, "Accept": "application/json"})
            r = c.getresponse()
            if r.status in (429, 500, 502, 503, 504):
                r.read(); c.close(); time.sleep(min(0.05 * (i + 1), 1)); continue
            return r.status, r, c
        except (OSError, http.client.HTTPException):
            c.close(); time.sleep(min(0.05 * (i + 1), 1))
    raise RuntimeError("API unreachable for GET " + path)


# ---- what a revision is reduced to ----

def marker_of(e):
    m = get(e, "arguments", "PropertyOverride")
    if e.get("name") != EXTENSION or not isinstance(m, dict) or not isinstance(m.get("name"), str):
        return None
    g = m.get("generation")
    return {"name": m["name"], "generation": g if isinstance(g, int) else 0,
            "uid": m.get("uid"), "targetUID": m.get("targetUID")}


def summarize_target(kind, o):
    ns = get(o, "metadata", "namespace") or ""
    out = []
    exts = get(o, "spec", "envoyExtensions")
    for e in exts if isinstance(exts, list) else []:
        if not isinstance(e, dict) or e.get("name") != EXTENSION:
            continue
        canon = json.dumps(e, sort_keys=True, separators=(",", ":"))
        if canon not in entries:
            entries[canon] = (kind, int(get(o, "metadata", "resourceVersion") or 0), ns + "/" + (get(o, "metadata", "name") or ""))
        out.append(marker_of(e))
    return {"uid": get(o, "metadata", "uid"), "entries": out}


LIVE = re.compile(r"generation (\d+) is (?:still )?live in (\w+) ([^/\s]+)/(\S+?)(?:;|$|\s)")


def summarize_po(o):
    ns = get(o, "metadata", "namespace") or ""
    ref = get(o, "spec", "targetRef") or {}
    kind = ref.get("kind") or "ServiceDefaults"
    target = (kind, ns, "global" if kind == "ProxyDefaults" else ref.get("name") or "")
    st = get(o, "status") or {}
    live_gen, live_in = 0, None
    pg = st.get("programmedGeneration")
    t = st.get("target")
    if isinstance(pg, int) and pg > 0:
        live_gen = pg
        if isinstance(t, dict):
            live_in = (t.get("kind"), t.get("namespace") or ns, t.get("name"))
    for c in st.get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Programmed":
            m = LIVE.search(c.get("message") or "")
            if m:
                live_gen = live_gen or int(m.group(1))
                live_in = live_in or (m.group(2), m.group(3), m.group(4))
    if live_gen and live_in is None:
        live_in = target
    return {"uid": get(o, "metadata", "uid"), "target": target, "live_gen": live_gen, "live_in": live_in,
            "deleting": get(o, "metadata", "deletionTimestamp") is not None}


def summarize(kind, o):
    return summarize_po(o) if KINDS[kind][1] == "po" else summarize_target(kind, o)


def key_of(o):
    return (get(o, "metadata", "namespace") or "", get(o, "metadata", "name") or "")


def record(kind, typ, o, exact=True, gap=False, lo=0, rv=None):
    rv = int(rv if rv is not None else get(o, "metadata", "resourceVersion") or 0)
    with lock:
        seq[0] += 1
        records.append((rv, 0 if KINDS[kind][1] == "po" else 1, seq[0], kind, typ, key_of(o),
                        summarize(kind, o), exact, gap, lo))


# ---- list and watch, one thread per kind ----

def list_all(kind):
    items, cont = [], ""
    while True:
        q = "?limit=500" + ("&continue=" + urllib.parse.quote(cont) if cont else "")
        status, r, c = request(KINDS[kind][0] + q)
        body = r.read(); c.close()
        if status != 200:
            raise RuntimeError("list %s: HTTP %d %s" % (kind, status, body[:200]))
        lst = json.loads(body)
        items += lst.get("items") or []
        cont = get(lst, "metadata", "continue") or ""
        if not cont:
            return items, int(get(lst, "metadata", "resourceVersion") or 0)


def watch_kind(kind, ready):
    known = {}  # (ns, name) -> (rv, object)
    items, rv = list_all(kind)
    for o in items:
        known[key_of(o)] = (int(o["metadata"]["resourceVersion"]), o)
        record(kind, "ADDED", o)
    watermark[kind] = rv
    ready.set()
    while True:
        seconds = args.watch_seconds
        if catchup.is_set():
            # The real kube-apiserver moves a watch's resourceVersion only with events of its own
            # kind and with bookmarks, which it sends a watch about once a minute or 2 s before
            # its timeout, carrying its watch cache's version. That cache lags the store for a
            # quiet kind until something asks for a consistent read: a list without a
            # resourceVersion (no limit, so the cache serves it; a selector matching nothing
            # keeps it small) makes it catch up; then a 3 s watch gets a bookmark within ~1 s.
            seconds = 3
            status, r2, c2 = request(KINDS[kind][0] + "?labelSelector=propertyoverride.io%2Fobserver-catchup%3Dnone")
            r2.read(); c2.close()
        status, r, c = request("%s?watch=1&allowWatchBookmarks=true&timeoutSeconds=%d&resourceVersion=%d" % (KINDS[kind][0], seconds, rv))
        watching[kind] = c
        expired = status == 410
        try:
            while not expired and status == 200:
                line = r.readline()
                if not line:
                    break
                ev = json.loads(line)
                typ, o = ev.get("type"), ev.get("object") or {}
                if typ == "ERROR":
                    expired = o.get("code") == 410
                    break
                new_rv = int(get(o, "metadata", "resourceVersion") or 0)
                if typ in ("ADDED", "MODIFIED", "DELETED"):
                    if typ == "DELETED":
                        known.pop(key_of(o), None)
                        record(kind, typ, o)  # at its deletion's resourceVersion
                    else:
                        known[key_of(o)] = (new_rv, o)
                        record(kind, typ, o)
                rv = max(rv, new_rv)
                watermark[kind] = rv
        except (OSError, http.client.HTTPException, ValueError):
            pass
        finally:
            c.close()
        if status not in (200, 410):
            time.sleep(0.2)
        if not expired:
            continue
        # 410: list again; what changed meanwhile is recorded as a gap (not judged)
        relists[kind] = relists.get(kind, 0) + 1
        with open(os.path.join(args.dir, "relists"), "a") as f:  # for tests that wait for one
            f.write("%s\n" % kind)
        items, list_rv = list_all(kind)
        seen = set()
        for o in items:
            k = key_of(o)
            seen.add(k)
            orv = int(o["metadata"]["resourceVersion"])
            old = known.get(k)
            if old is None or old[0] != orv:
                record(kind, "MODIFIED" if old else "ADDED", o, gap=True, lo=old[0] if old else rv)
            known[k] = (orv, o)
        for k in [k for k in known if k not in seen]:
            orv, o = known.pop(k)
            record(kind, "DELETED", o, exact=False, gap=True, lo=orv, rv=list_rv)
        rv = list_rv
        watermark[kind] = rv


def run(kind, ready):
    try:
        watch_kind(kind, ready)
    except Exception as e:  # reported, and the run fails: an observer that stopped seeing proves nothing
        failure.append("%s watch: %r" % (kind, e))
        ready.set()


# ---- judging ----

def validate_entries():
    """(c): every distinct entry, one List item each, through the webhook's own check."""
    items, where = [], []
    with lock:
        seen = list(entries.items())
    for canon, (kind, rv, at) in seen:
        ns, name = at.split("/", 1)
        items.append({"apiVersion": "consul.hashicorp.com/v1alpha1", "kind": kind,
                      "metadata": {"name": "global" if kind == "ProxyDefaults" else name, "namespace": ns},
                      "spec": {"envoyExtensions": [json.loads(canon)]}})
        where.append((kind, rv, at, canon))
    if not items:
        return []
    path = os.path.join(args.dir, "entries.json")
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
    out = subprocess.run([args.validator, "validate", "-f", path, "--output", "json"], capture_output=True, text=True)
    try:
        rep = json.loads(out.stdout)
    except ValueError:
        raise RuntimeError("validate -f gave no report (exit %d): %s" % (out.returncode, out.stderr[:500]))
    bad = {}
    for f in rep.get("findings") or []:
        if f.get("severity") != "error":
            continue
        i = f.get("item")
        if not isinstance(i, int) or i < 0 or i >= len(where):
            raise RuntimeError("validate -f finding without an item: %r" % f)
        bad.setdefault(i, []).append(f.get("message") or "")
    if rep.get("summary", {}).get("invalid", 0) != len(bad):
        raise RuntimeError("validate -f: %d invalid but %d located" % (rep["summary"]["invalid"], len(bad)))
    return [(where[i][1], "(c) rv=%d %s %s carries an entry the engine refuses: %s; entry %s" %
             (where[i][1], where[i][0], where[i][2], "; ".join(m.splitlines()[0] for m in msgs), where[i][3][:300]))
            for i, msgs in sorted(bad.items())]


def owns(m, po, tgt):
    """Whether entry marker m is PropertyOverride po's entry in target tgt (see the module text)."""
    if m is None or po is None:
        return False
    if m.get("uid") is not None and m["uid"] != po["uid"]:
        return False
    if m.get("targetUID") is not None and m["targetUID"] != tgt["uid"]:
        return False
    return True


def judge():
    marks = []
    try:
        with open(os.path.join(args.dir, "marks")) as f:
            for line in f:
                rv, _, label = line.strip().partition(" ")
                marks.append((int(rv), label))
    except FileNotFoundError:
        pass
    marks.sort()
    with lock:
        recs = sorted(records)
    # PropertyOverrides whose revisions a 410 hid: not judged inside the hidden window
    blind = {}
    for r in recs:
        if r[1] == 0 and r[8]:
            blind.setdefault((r[5], r[6]["uid"]), []).append((r[9], r[0]))
    phases = [{"label": "start", "from": 0, "deleted": 0, "dropping_writes": 0, "dropped_entries": 0,
               "target_writes": 0, "violations": 0}]
    for rv, label in marks:
        phases.append({"label": label, "from": rv, "deleted": 0, "dropping_writes": 0, "dropped_entries": 0,
                       "target_writes": 0, "violations": 0})

    def phase(rv):
        ph = phases[0]
        for x in phases:
            if x["from"] < rv:
                ph = x
        return ph

    pos, tgts, out, unjudged = {}, {}, [], 0
    marked, matched = 0, 0  # entries with a marker in judged revisions; of those, of a live PropertyOverride
    for rv, order, _, kind, typ, (ns, name), s, exact, gap, lo in recs:
        if order == 0:
            if typ == "DELETED":
                pos.pop((ns, name), None)
            else:
                pos[(ns, name)] = s
            continue
        tkey = (kind, ns, name)
        prev = tgts.get(tkey)
        if typ == "DELETED":
            tgts.pop(tkey, None)
        else:
            tgts[tkey] = s
        ph = phase(rv)
        if typ == "DELETED":
            ph["deleted"] += 1
        elif prev is not None:
            ph["target_writes"] += 1
        if prev is None:
            continue
        if gap or not exact:
            unjudged += 1
            continue
        marked += sum(1 for m in prev["entries"] if m)
        # PropertyOverrides whose status says a generation is live here, not being deleted
        live = {}
        for (pns, pname), po in pos.items():
            if pns != ns or po["deleting"] or po["target"] != tkey or not po["live_gen"] or po["live_in"] != tkey:
                continue
            if any(a < rv <= b for a, b in blind.get(((pns, pname), po["uid"]), ())):
                continue
            live[pname] = po
        matched += sum(1 for m in prev["entries"] if m and owns(m, live.get(m["name"]), prev))
        if typ == "DELETED":
            lost = sorted("%s@%d" % (m["name"], m["generation"]) for m in prev["entries"]
                          if m and owns(m, live.get(m["name"]), prev))
            if live:
                ph["violations"] += 1
                ph["dropped_entries"] += len(lost)
                out.append((rv, "(a) rv=%d %s %s/%s DELETED while %d PropertyOverride(s) point at it with a live "
                                "generation (%s); entries lost: %s" %
                            (rv, kind, ns, name, len(live), ", ".join("%s@%d" % (n, live[n]["live_gen"]) for n in sorted(live)[:8]),
                             " ".join(lost[:20]) or "none")))
            continue
        now = {}
        for m in s["entries"]:
            if m:
                now.setdefault(m["name"], []).append(m)
        lost = []
        for m in prev["entries"]:
            po = live.get(m["name"]) if m else None
            if not owns(m, po, prev):
                continue
            mine = [x for x in now.get(m["name"], ()) if owns(x, po, s)]
            if not mine:
                lost.append("%s@%d dropped (status: generation %d live)" % (m["name"], m["generation"], po["live_gen"]))
            elif max(x["generation"] for x in mine) < m["generation"]:
                lost.append("%s@%d turned back to generation %d" % (m["name"], m["generation"], max(x["generation"] for x in mine)))
        if lost:
            ph["violations"] += 1
            ph["dropping_writes"] += 1
            ph["dropped_entries"] += len(lost)
            out.append((rv, "(b) rv=%d %s %s/%s lost live entries: %s" % (rv, kind, ns, name, "; ".join(lost[:20]))))
    if marked > 20 and matched == 0:
        # an observer that matches nothing judges nothing: the marker or status format moved on
        raise RuntimeError("%d marked entries seen, none matched a PropertyOverride whose status says it is live: "
                           "has the marker (arguments.PropertyOverride) or the status (programmedGeneration, "
                           "target, Programmed message) changed?" % marked)
    for rv, msg in validate_entries():
        phase(rv)["violations"] += 1
        out.append((rv, msg))
    out.sort()
    counts = {}
    for r in recs:
        counts[r[3]] = counts.get(r[3], 0) + 1
    summary = {"revisions": counts, "relists": relists, "unjudged": unjudged, "entries": len(entries),
               "violations": len(out), "phases": phases}
    return out, summary


def main():
    threads = []
    for kind in KINDS:
        ready = threading.Event()
        t = threading.Thread(target=run, args=(kind, ready), daemon=True)
        t.start()
        threads.append(ready)
    for r in threads:
        r.wait()
    if failure:
        print("observer failed: " + "; ".join(failure)); return 2
    with open(os.path.join(args.dir, "ready.tmp"), "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(os.path.join(args.dir, "ready.tmp"), os.path.join(args.dir, "ready"))
    stop = os.path.join(args.dir, "stop")
    while not os.path.exists(stop):
        if failure:
            print("observer failed: " + "; ".join(failure)); return 2
        time.sleep(0.1)
    time.sleep(0.05)
    want = int(open(stop).read().strip() or 0)
    end = time.time() + args.catchup_timeout
    catchup.set()
    for kind, c in list(watching.items()):  # each long watch ends now and resumes short
        sock = c.sock
        if watermark.get(kind, 0) < want and sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
    while any(watermark.get(k, 0) < want for k in KINDS):  # bookmarks move every stream along
        if failure or time.time() > end:
            print("observer failed: did not reach resourceVersion %d (%s) %s" % (want, watermark, "; ".join(failure)))
            return 2
        time.sleep(0.05)
    try:
        out, summary = judge()
    except RuntimeError as e:
        print("observer failed: %s" % e); return 2
    with open(os.path.join(args.dir, "summary.json"), "w") as f:
        json.dump(summary, f)
    rc = summary["revisions"]
    print("observer: %d revisions (%s), %d distinct entries validated, %d 410 relists (%d revisions after a gap not judged)"
          % (sum(rc.values()), ", ".join("%s %d" % kv for kv in sorted(rc.items())), summary["entries"],
             sum(relists.values()), summary["unjudged"]))
    for ph in summary["phases"]:
        print("observer: phase %-28s from rv %-7d target writes %-5d DELETED %-4d writes dropping a live entry %-4d "
              "live entries lost %-4d violations %d" % ('"%s"' % ph["label"], ph["from"], ph["target_writes"], ph["deleted"],
                                                     ph["dropping_writes"], ph["dropped_entries"], ph["violations"]))
    for _, msg in out[:200]:
        print("VIOLATION " + msg)
    if len(out) > 200:
        print("VIOLATION ... and %d more" % (len(out) - 200))
    return 1 if out else 0


sys.exit(main())
