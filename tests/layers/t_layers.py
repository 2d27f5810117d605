"""Compiles each layering case (tests/layers/CMakeLists.txt) with the command CMake generated for
it and checks the verdict: "ok" compiles; "forbidden" fails because the header (or one it
includes) is not on that module's include path.
usage: /usr/bin/python3 t_layers.py BUILD_DIR CASES_FILE"""
import json
import os
import shlex
import subprocess
import sys

build, cases = sys.argv[1], sys.argv[2]
with open(os.path.join(build, "compile_commands.json")) as f:
    db = {os.path.basename(e["file"]): e for e in json.load(f) if "/tests/layers/" in e["file"]}

n = fails = 0
with open(cases) as f:
    for line in f:
        if not line.strip():
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
if n == 0:
    print(f"FAIL: no cases in {cases}")
print(f"{n} cases, {fails} failed")
sys.exit(1 if fails or n == 0 else 0)
