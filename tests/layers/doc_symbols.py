#!/usr/bin/env python3
"""Every identifier of ours a document names exists in the code (issue 27: controller/meshes/
README.md named the `...With` twin of po_CompiledOverride_FromObject, gone since).

The documents: README.md, ARCHITECTURE.md, CONTRIBUTING.md (any folder's) and docs/*.md. What
they name: each po_... or kPo_... word (po_Schema_Cache, kPo_Ctl_Start, a CMake target such as
po_engine; a prefix ending in `_` or `*`, such as po_Schema_*, names a family and must begin at
least one). The code: every word of the C and Go sources, the CMake files and the scripts,
comments (and C strings) left out, so a name only a comment still carries does not count.
  doc_symbols.py ROOT
"""
import os
import re
import subprocess
import sys

WORD = re.compile(r"\b(k?[Pp]o_[A-Za-z0-9_]*)(\*?)")
# CONTRIBUTING.md's naming patterns, not names
PLACEHOLDERS = {"po_Type_Verb", "kPo_Type_Value"}
# the code: C, Go, the build (CMake target names), the scripts (shell functions, Python)
BUILD = (".c", ".h", ".go", ".cmake", ".sh", ".py")


def files(root, pred):
    out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard"], capture_output=True,
                         text=True, check=True).stdout.split()
    return sorted(p for p in out if pred(p) and os.path.isfile(os.path.join(root, p)))


def code_words(root):
    words = set()
    lit = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    hash_comment = re.compile(r"(^|\s)#[^\n]*")
    for p in files(root, lambda p: p.endswith(BUILD) or os.path.basename(p) == "CMakeLists.txt"):
        with open(os.path.join(root, p), encoding="utf-8", errors="replace") as f:
            text = f.read()
        text = lit.sub(" ", text) if p.endswith((".c", ".h", ".go")) else hash_comment.sub(" ", text)
        words.update(re.findall(r"\b[kK]?[Pp]o_[A-Za-z0-9_]+", text))
    return words


def is_doc(p):
    base = os.path.basename(p)
    return base in ("README.md", "ARCHITECTURE.md", "CONTRIBUTING.md") or (p.startswith("docs/") and p.endswith(".md"))


def main(root):
    words = code_words(root)
    bad = []
    named = 0
    for doc in files(root, is_doc):
        with open(os.path.join(root, doc), encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(f, 1):
                for m in WORD.finditer(line):
                    name, star = m.group(1), m.group(2)
                    if not (name.startswith("po_") or name.startswith("kPo_")) or name in ("po_", "kPo_") \
                            or name in PLACEHOLDERS:
                        continue
                    named += 1
                    if star or name.endswith("_"):
                        if not any(w.startswith(name.rstrip("*")) for w in words):
                            bad.append(f"{doc}:{no}: no identifier begins with {name}")
                    elif name not in words:
                        bad.append(f"{doc}:{no}: {name} is in no C source or header (renamed or gone?)")
    for b in bad:
        print("FAIL " + b)
    print(f"{named} identifiers named in the documents, {len(bad)} not in the code")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
