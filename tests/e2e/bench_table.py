"""The controller benchmark's table: bench_controller.sh's JSON report lines as a Markdown table,
then the log-log exponents fitted over the sweep (least squares of log(total) on log(N), over
the uncapped runs: 1.0 is linear). /usr/bin/python3 tests/e2e/bench_table.py REPORT.jsonl"""
import json, math, sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
runs = [r for r in rows if r["mode"] == "run"]


def f(v, fmt):
    return "-" if v is None else fmt % v


print("| N | targets | server | CPU/PO ms (kernel) | reconciles/PO | writes/PO | RSS base MB | peak MB | RSS/PO KB "
      "| convergence s | last create -> last write s | TargetFull | API server CPU s / peak MB | load start-end (mean) |")
print("|" + "---|" * 14)
for r in runs:
    srv = " + ".join("%s %s / %s" % (k[len("server_"):-len("_cpu_s")], r[k], r.get(k[:-len("_cpu_s")] + "_peak_mb"))
                     for k in sorted(r) if k.startswith("server_") and k.endswith("_cpu_s"))
    print("| %d | %d%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %.1f-%.1f (%.1f) |" % (
        r["n"], r["targets"], " (capped)" if r["capped"] else "", r["label"], f(r["cpu_ms_per_po"], "%.3f") + (
            " (%d%%)" % round(100 * r["cpu_sys_share"]) if r.get("cpu_sys_share") is not None else ""),
        f(r["reconciles_per_po"], "%.3f"), f(r["writes_per_po"], "%.3f"), f(r["rss_base_mb"], "%.1f"),
        f(r["rss_peak_mb"], "%.1f"), f(r["rss_kb_per_po"], "%.2f"), f(r["convergence_s"], "%.1f"),
        f(r["last_create_to_last_write_s"], "%.2f"), r["target_full"], srv or "-", r["load_start"][0],
        r["load_end"][0], r["load_mean"]))
restarts = [r for r in rows if r["mode"] == "restart"]
if restarts:
    print("\n| restart at N | server (flags) | ready s | workers start s | reconciles | requeues | retries | writes "
          "| CPU s at ready / settled | peak MB | started before sync | load at the end |")
    print("|" + "---|" * 12)
    for r in restarts:
        print("| %d | %s | %s | %s | %d | %d | %d | %d | %s / %.1f | %.1f | %s | %s |" % (
            r["n"], r.get("label", ""), f(r["ready_s"], "%.2f"), f(r["workers_start_s"], "%.2f"), r["reconciles"],
            r["requeues"], r["retries"], r["writes"], f(r.get("cpu_at_ready_s"), "%.1f"), r["cpu_s"], r["rss_peak_mb"],
            "-" if r["unsynced_start_warned"] is None else ("yes" if r["unsynced_start_warned"] else "no"),
            "%.1f" % r["load_end"][0] if r.get("load_end") else "-"))


def slope(pts):
    pts = [(math.log(x), math.log(y)) for x, y in pts if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx, my = sum(x for x, _ in pts) / len(pts), sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else None


sweep = [r for r in runs if not r["capped"] and r["converged"]]
for what, key in (("CPU", "cpu_s"), ("reconciles", "reconciles"), ("writes", "writes")):
    e = slope([(r["n"], r[key]) for r in sweep])
    print("- exponent of %s over N (%d points): %s" % (what, len(sweep), "-" if e is None else "%.3f" % e))
e = slope([(r["n"], r["rss_peak_mb"] - r["rss_base_mb"]) for r in sweep])
print("- exponent of RSS above the base over N: %s" % ("-" if e is None else "%.3f" % e))
bad = [r for r in rows if not r["converged"]]
if bad:
    print("NOT CONVERGED: " + "; ".join("%s %d/%d: %s" % (r["mode"], r["n"], r["targets"], r["why"]) for r in bad))
