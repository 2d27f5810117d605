#!/usr/bin/env python3
"""One variable regenerates every golden file (issue 27): a shell test compares its output with
a committed file only through lib.sh's `golden` (tests/cli/lib.sh), which PO_UPDATE_GOLDEN=1
turns into a rewrite; a comparison written by hand (cmp, diff, jq's --slurpfile / --rawfile /
--argfile) against a file under a testdata/ or golden/ folder is one that variable silently
skips: testdata/render.expected.json was such a file, hand-written and compared with jq.
The C tests' goldens go through tests/golden.h, which reads the same variable.
  golden_files.py ROOT
"""
import os
import re
import sys

# A comparison with a committed file: the command, then (same line) a path into testdata/ or
# golden/, by name or through the scripts' $data / $gold variables.
COMPARE = re.compile(r"(?<![\w-])(cmp|diff)\b|--(slurpfile|rawfile|argfile)\b")
COMMITTED = re.compile(r"(testdata/|golden/|\$data\b|\$\{data\}|\$gold\b|\$\{gold\})")
# The one place allowed to: the golden function itself.
ALLOWED = {os.path.join("tests", "cli", "lib.sh")}


def main(root):
    bad = []
    for top, dirs, files in os.walk(os.path.join(root, "tests")):
        dirs[:] = sorted(d for d in dirs if d not in ("oracles", "node_modules"))
        for name in sorted(files):
            if not name.endswith(".sh"):
                continue
            path = os.path.join(top, name)
            rel = os.path.relpath(path, root)
            if rel in ALLOWED:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for no, line in enumerate(f, 1):
                    code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
                    m = COMPARE.search(code)
                    if m and COMMITTED.search(code[m.start():]):
                        bad.append(f"{rel}:{no}: compares with a committed file outside lib.sh's golden "
                                   f"(PO_UPDATE_GOLDEN=1 would not rewrite it): {line.strip()}")
    for b in bad:
        print("FAIL " + b)
    print(f"golden files: {len(bad)} comparison(s) outside golden()")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
