#!/usr/bin/env python3
"""No process-wide mutable state outside what a manager or an arena owns (issue 27,
ARCHITECTURE.md section 1): every variable of static storage in product code (engine/src,
proto/src, controller/) that is not const, at file or function scope, must be listed in
process_state.allow with why it is no such state (set once and read-only after, thread-local,
the one signal pipe's owner). engine/src/pgv_string.c kept a process-wide cache of compiled
patterns and its mutex: now its schema keeps them (po_Schema_Cache). An entry of the list that
names no variable any more fails too (a stale allowance).
  process_state.py ROOT ALLOW
"""
import os
import re
import sys

ROOTS = ("engine/src", "proto/src", "controller")
# `static` (or a storage-class mix with it) that declares an object: not a function, not const.
DECL = re.compile(r"^\s*(?:static\s+(?:_Thread_local\s+)?|_Thread_local\s+static\s+)(?P<rest>[^;{]*?)(?:=|;|\[)")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def names_in(line):
    m = DECL.match(line)
    if not m:
        return []
    rest = m.group("rest")
    if re.search(r"\binline\b", rest):
        return []
    # const object: "const T x" with no pointer, or "T *const x"; "const char *x" is a mutable pointer
    if ("*" not in rest and re.search(r"\bconst\b", rest)) or re.search(r"\*\s*const\b", rest):
        return []
    head = line[m.start("rest"):]
    # an array's bound may hold parentheses (`char why[sizeof ((T *)0)->m + 96]`): not a function's
    if "(" in re.sub(r"\[[^\]]*\]", "", head.split("=")[0].split(";")[0]):
        return []  # a function, or a function pointer (const ones only in this code)
    decl = head.split("=")[0] if "=" in head.split(";")[0] else head.split(";")[0]
    names = []
    for part in decl.split(","):
        w = re.findall(r"[A-Za-z_]\w*", re.sub(r"\[.*?\]", "", part))
        if w:
            names.append(w[-1])
    return names


def main(root, allow_path):
    allowed = {}
    with open(allow_path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            path, rest = line.split(" ", 1)
            name = rest.split(":", 1)[0]
            allowed[(path, name)] = False
    bad = []
    for top in ROOTS:
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for fn in sorted(files):
                if not fn.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = strip_comments(f.read())
                for no, line in enumerate(text.split("\n"), 1):
                    for name in names_in(line):
                        if (rel, name) in allowed:
                            allowed[(rel, name)] = True
                        else:
                            bad.append(f"{rel}:{no}: '{name}' is process-wide mutable state (static, not const) "
                                       f"that no manager or arena owns: move it into the object it serves, or "
                                       f"say in process_state.allow why it is none")
    for (path, name), seen in sorted(allowed.items()):
        if not seen:
            bad.append(f"{path}: '{name}' is listed in process_state.allow but declared nowhere: remove the entry")
    for b in bad:
        print("FAIL " + b)
    print(f"process state: {sum(allowed.values())} allowed variables, {len(bad)} refused")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
