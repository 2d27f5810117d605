"""Compiles each layering case (tests/layers/CMakeLists.txt) with the command CMake generated for
it and checks the verdict: "ok" compiles; "forbidden" fails because the header (or one it
includes) is not on that module's include path.
Then checks that ARCHITECTURE.md's module table names, for each module, exactly the modules of
ours its CMakeLists.txt links (the "deps" lines of CASES_FILE), so the document stays true.
Then the rules a compile cannot show, read from the sources (include_graph.py): no mesh folder
includes another mesh's or the mesh table, the core includes no mesh, and the files of the core
and the meshes include each other in no circle.
usage: /usr/bin/python3 t_layers.py BUILD_DIR CASES_FILE ARCHITECTURE_MD SOURCE_DIR"""
import json
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import include_graph  # noqa: E402

build, cases, arch, source = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]

# "| `controller/kube` (`po_kube`) | base | libcurl, ... |" -> {"po_kube": {"po_base"}}
NAMES = {"proto": "po_proto", "engine": "po_engine", "engine api": "po_engine_api", "base": "po_base",
         "kube": "po_kube", "runtime": "po_runtime", "targets": "po_targets", "reconcile": "po_reconcile",
         "meshes": "po_meshes", "consul": "po_mesh_consul", "istio": "po_mesh_istio",
         "envoy gateway": "po_mesh_eg",
         "webhook": "po_webhook", "app": "po_app", "cli": "po_cli"}
documented = {}
with open(arch) as f:
    for row in f:
        m = re.match(r"\|[^|]*\(`(po_\w+)`[^|]*\|([^|]*)\|", row)
        if not m:
            continue
        words = re.sub(r"\([^)]*\)", "", m.group(2)).strip()
        documented[m.group(1)] = {NAMES.get(w.strip().lower(), "?" + w.strip()) for w in words.split(",")
                                  if w.strip() and w.strip() != "—"}
declared = {}
with open(os.path.join(build, "compile_commands.json")) as f:
    db = {os.path.basename(e["file"]): e for e in json.load(f) if "/tests/layers/" in e["file"]}

n = fails = 0
with open(cases) as f:
    for line in f:
        if not line.strip():
            continue
        if line.startswith("deps "):
            parts = line.split()
            declared[parts[1]] = set(parts[2].split(",")) if len(parts) > 2 else set()
            continue
        target, expect, mod, header = line.split()
        n += 1
        src = target.replace("po_layers_", "") + ".c"
        entry = db.get(src)
        if entry is None:
            print(f"FAIL: {src} is not in compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS off?)")
            fails += 1
            continue
        argv = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
        # The object goes nowhere: only the verdict matters.
        argv = [a for a in argv]
        if "-o" in argv:
            argv[argv.index("-o") + 1] = os.devnull
        p = subprocess.run(argv, cwd=entry["directory"], capture_output=True, text=True, timeout=120)
        got = "ok" if p.returncode == 0 else "forbidden"
        if got != expect:
            print(f"FAIL: {mod} including {header}: expected {expect}, got {got}\n    {p.stderr.strip()[:800]}")
            fails += 1
        elif got == "forbidden" and "No such file or directory" not in p.stderr:
            print(f"FAIL: {mod} including {header} failed, but not for a missing header:\n    {p.stderr.strip()[:800]}")
            fails += 1
        else:
            print(f"ok: {mod} {expect} {header}")
for mod, deps in sorted(declared.items()):
    if mod not in documented:
        print(f"FAIL: {mod} has no row in {arch}")
        fails += 1
    elif documented[mod] != deps:
        print(f"FAIL: {arch} says {mod} uses {sorted(documented[mod])}; its CMakeLists links {sorted(deps)}")
        fails += 1
    else:
        print(f"ok: {arch} row of {mod} matches its CMakeLists ({', '.join(sorted(deps)) or 'none'})")
graph_rules = include_graph.check(os.path.abspath(source))
for sentence in graph_rules:
    print(f"FAIL: {sentence}")
fails += len(graph_rules)
if not graph_rules:
    print("ok: no mesh folder includes another mesh's or the table; the core includes no mesh; no circle of files "
          "in controller/targets and controller/meshes")
if n == 0 or not declared:
    print(f"FAIL: no cases in {cases}")
print(f"{n} cases, {fails} failed")
sys.exit(1 if fails or n == 0 or not declared else 0)
