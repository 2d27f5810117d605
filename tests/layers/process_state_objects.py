#!/usr/bin/env python3
"""process_state, read from what the compiler made rather than from the text: every object of
writable static storage (.data, .bss, their thread-local twins .tdata and .tbss, common symbols)
in the object files of product code (engine/src, proto/src, controller/) must be listed in
process_state.allow, as process_state.py demands of the sources. The text scanner guesses at C
with regular expressions: a declaration it does not read (an array bound holding `sizeof (T)`, a
`static struct { ... } x;`, a static made by a macro, a global without `static`) passes it
silently; the object files hold every one, whatever the spelling. Constant data (.rodata,
.data.rel.ro) is none. A function-local static is named `NAME.N` by the compiler: NAME here.
  process_state_objects.py BUILD_DIR SOURCE_DIR ALLOW
"""
import os
import re
import subprocess
import sys

ROOTS = ("engine/src", "proto/src", "controller")
# objdump -t: "ADDR FLAGS SECTION\tSIZE NAME"; a defined object ('O') or a common symbol.
ROW = re.compile(r"^[0-9a-f]+\s.*?\s(?P<sec>\*COM\*|\.\S+)\s+[0-9a-f]+\s+(?P<name>\S+)$")
WRITABLE = re.compile(r"^(\*COM\*|\.bss|\.data|\.tbss|\.tdata)(\..*)?$")


def source_of(build, obj):
    """build/controller/kube/CMakeFiles/po_kube.dir/src/client.c.o -> controller/kube/src/client.c"""
    rel = os.path.relpath(obj, build)
    m = re.match(r"^(?P<dir>.*?)/?CMakeFiles/[^/]+\.dir/(?P<src>.*)\.o$", rel)
    if not m:
        return None
    return os.path.normpath(os.path.join(m.group("dir"), m.group("src")))


def writable_objects(obj):
    out = subprocess.run(["objdump", "-t", obj], capture_output=True, text=True, check=True).stdout
    for line in out.split("\n"):
        m = ROW.match(line)
        if not m or m.group("name").startswith((".", "__")):
            continue  # not a symbol row, a section's own symbol, or the compiler's (sanitizers, coverage)
        sec = m.group("sec")
        # an object ('O'); a thread-local one is typed TLS, which objdump shows with no flag
        if " O " not in line and sec != "*COM*" and not sec.startswith((".tbss", ".tdata")):
            continue
        if sec.startswith(".data.rel.ro") or not WRITABLE.match(sec):
            continue
        yield re.sub(r"\.\d+$", "", m.group("name"))


def main(build, root, allow_path):
    allowed = set()
    with open(allow_path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                path, rest = line.split(" ", 1)
                allowed.add((path, rest.split(":", 1)[0]))
    bad, seen, objects = [], 0, 0
    for dirpath, dirs, files in os.walk(build):
        dirs.sort()
        for fn in sorted(files):
            if not fn.endswith(".c.o"):
                continue
            src = source_of(build, os.path.join(dirpath, fn))
            if not src or not src.startswith(tuple(r + "/" for r in ROOTS)) or not os.path.exists(os.path.join(root, src)):
                continue
            objects += 1
            for name in writable_objects(os.path.join(dirpath, fn)):
                seen += 1
                if (src, name) not in allowed:
                    bad.append(f"{src}: '{name}' is process-wide mutable state (writable static storage in "
                               f"{fn}) that no manager or arena owns: move it into the object it serves, or say "
                               f"in process_state.allow why it is none")
    for b in bad:
        print("FAIL " + b)
    print(f"process state (object files): {objects} objects, {seen} writable variables, {len(bad)} refused")
    if objects == 0:
        print(f"FAIL no object file of product code under {build}: build first")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
