#!/usr/bin/env python3
"""Every repository path a document names exists (issue 27: reconcile/README.md named
controller/cli/kube_io.c, moved to controller/app/src long before).

The documents: README.md, ARCHITECTURE.md, CONTRIBUTING.md (any folder's) and docs/*.md. What
they name:
  - a backquoted path: `controller/app/src/kube_io.c`, `src/reconcile.c`, `tests/layers/`,
    `po/base/status.h` (an include path), `cmd_controller.c` (a file of the project, by name),
    with or without a :LINE suffix;
  - a Markdown link's target that is not a URL nor an anchor alone (relative to the document), inline
    or a reference definition ("[name]: path"); its #anchor, when the target is a Markdown file,
    is one of that file's headings (GitHub's slug: lower case, punctuation dropped, spaces to -);
  - a path ending in "/" names a folder, not a file.
A path is found relative to the document's folder or the project's root; an include path
(po/...) under some module's include/ folder; a bare file name anywhere in the project; a path
of a module's own layout (src/x.c in a module's README) as the end of a path under the document's
folder (a README at the root or in docs/: anywhere).
Not paths and not checked: text with a space, a shell variable, a placeholder (NAME, <x>, a
glob), an absolute path (/usr/include, an API route), an option (--flag), and what the build or
setup writes (build/, .deps/).
  doc_paths.py ROOT
"""
import os
import re
import subprocess
import sys

EXT = (".c", ".h", ".md", ".sh", ".py", ".go", ".yaml", ".yml", ".json", ".txt", ".cmake", ".mod", ".sum",
       ".proto", ".tpl", ".jsonl", ".patch", ".in")
BACKQUOTED = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
PATHLIKE = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_./+-]*$")
GENERATED = (".deps", "build", "build-", "~", "$")


def tracked(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard"], capture_output=True,
                         text=True, check=True).stdout.split("\n")
    return [p for p in out if p and os.path.exists(os.path.join(root, p))]


def documents(files):
    return sorted(p for p in files
                  if os.path.basename(p) in ("README.md", "ARCHITECTURE.md", "CONTRIBUTING.md")
                  or re.fullmatch(r"docs/[^/]+\.md", p))


class Tree:
    def __init__(self, root, files):
        self.root = root
        self.paths = set(files)
        self.files = set(files)
        for p in files:  # every folder of a tracked file is a path too
            d = os.path.dirname(p)
            while d and d not in self.paths:
                self.paths.add(d)
                d = os.path.dirname(d)
        self.names = {os.path.basename(p) for p in self.paths}
        self.top = {p.split("/", 1)[0] for p in files}
        self.includes = {p.split("/include/", 1)[1] for p in files if "/include/" in p}

    def has(self, doc, ref):
        if ref.endswith("/") and ref.rstrip("/") in self.files:
            return False  # a file named as a folder
        ref = ref.rstrip("/")
        # or a program built from a source of that name (tests/bench/bench_engine)
        return any(self.has_path(doc, ref + ext) for ext in ("", ".c", ".sh", ".py"))

    def has_path(self, doc, ref):
        here = os.path.normpath(os.path.join(os.path.dirname(doc), ref))
        if ref in self.paths or here in self.paths:
            return True
        if "/" not in ref:
            return ref in self.names
        if ref.startswith("po/"):
            return ref in self.includes
        if ref.startswith("../") or ref.startswith("./"):
            # said of a file in a folder of the document's (base/'s ../../crds in deploy/)
            top = os.path.dirname(doc)
            return any(os.path.normpath(os.path.join(p, ref)) in self.paths
                       for p in self.paths if os.path.dirname(p) == top)
        # a module's own layout: under the document's folder (adv-27: anywhere, so reconcile's
        # README naming src/kube_io.c passed on controller/app/src/kube_io.c)
        base = os.path.dirname(doc)
        under = "" if base in ("", "docs") else base + "/"
        return any(p.startswith(under) and p.endswith("/" + ref) for p in self.paths)


def is_path(tok, tree, doc):
    """Whether a backquoted token names a path of ours: it begins with a folder or file of the
    project's root or of the document's folder, with ../, or with po/ (an include path); a bare
    name is a file of ours when it has a source's extension (.c, .sh, .py; a bare .h is as
    often a system header)."""
    if not PATHLIKE.match(tok) or tok.startswith(GENERATED) or "..." in tok or tok.endswith("."):
        return False
    if re.search(r"(^|/)([A-Z]{2,}|[a-z])(/|\.|$)", tok) and not tok.endswith(".md"):
        return False  # a placeholder: tests/oracles/NAME/, x.yaml
    if "/" not in tok:
        return tok.endswith((".c", ".sh", ".py")) and not tok.startswith(".")
    first = tok.split("/", 1)[0]
    return first in ("..", ".", "po") or first in tree.top or \
        os.path.normpath(os.path.join(os.path.dirname(doc), first)) in tree.paths


def refs(text, tree, doc):
    """(line, reference, kind) of every path-like reference of a Markdown text."""
    fence = False
    for n, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        for m in BACKQUOTED.finditer(line):
            tok = re.sub(r":\d+(-\d+)?$", "", m.group(1).strip())
            if is_path(tok, tree, doc):
                yield n, tok, "path"
        targets = [m.group(1) for m in LINK.finditer(line)]
        d = REFDEF.match(line)
        if d:
            targets.append(d.group(1))
        for target in targets:
            t, _, anchor = target.partition("#")
            if "://" in target or target.startswith("mailto:"):
                continue
            if t:
                yield n, t, "link"
            if anchor:
                yield n, (t or os.path.basename(doc)) + "#" + anchor, "anchor"


def slugs(path):
    """The anchors GitHub gives the headings of a Markdown file."""
    out, fence = set(), False
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            m = None if fence else HEADING.match(line)
            if m:
                out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


def anchor_ok(root, doc, ref):
    t, anchor = ref.split("#", 1)
    path = os.path.normpath(os.path.join(root, os.path.dirname(doc), t))
    if not path.endswith(".md") or not os.path.isfile(path):
        return True  # a source line (#L10) or a file the link check judges
    return anchor.lower() in slugs(path)


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    files = tracked(root)
    tree = Tree(root, files)
    checked = fail = 0
    for doc in documents(files):
        with open(os.path.join(root, doc), encoding="utf-8") as fh:
            text = fh.read()
        for line, ref, kind in refs(text, tree, doc):
            checked += 1
            if kind == "link":
                ok = os.path.exists(os.path.normpath(os.path.join(root, os.path.dirname(doc), ref)))
            elif kind == "anchor":
                ok = anchor_ok(root, doc, ref)
            else:
                ok = tree.has(doc, ref)
            if not ok:
                what = {"link": "a link", "anchor": "a link's #anchor, not a heading of it"}.get(kind, "backquoted")
                print(f"FAIL {doc}:{line}: names {ref} ({what}), which is not in the project")
                fail += 1
    print(f"{checked} paths named in {len(documents(files))} documents checked, {fail} not in the project")
    if checked < 200:
        print(f"FAIL: only {checked} paths found: the scan is broken")
        return 1
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
