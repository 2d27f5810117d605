#!/usr/bin/env python3
"""The length of every function of the product's C sources and headers (controller/, engine/, proto/:
not tests/, not the .deps build, not generated code, which is not in the tree).

A function is counted from the line of its name to the line of its closing brace, so the
signature counts and a long parameter list is length too. The scanner knows C well enough for
our own sources: comments, string and character literals, preprocessor lines (a `{` in a macro
body is not a function); a function is a `{` at brace depth 0 whose preceding code ends in `)`
(so a struct, enum or array initialiser is not one). What it cannot read without guessing (braces
that do not pair up, from a macro or an #if branch; a K&R definition) fails naming the line rather
than leaving functions uncounted; <% %> are braces.

  function_lengths.py ROOT [--top N]              the N longest functions (default 10)
  function_lengths.py ROOT --limit L --allow FILE  fail on each function over L lines that the
                                                   allow-list (lines "path function") does not
                                                   name, and on each allow-list line that names a
                                                   function no longer over L (so the list only
                                                   shrinks)
"""
import os
import re
import subprocess
import sys

DIRS = ("controller", "engine", "proto")
IDENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\($")


def sources(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", *DIRS],
                             capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
        for d in DIRS:
            for dirpath, _, names in os.walk(os.path.join(root, d)):
                out += [os.path.relpath(os.path.join(dirpath, n), root) for n in names]
    return sorted(p for p in out if p.endswith((".c", ".h")) and os.path.isfile(os.path.join(root, p)))


def strip(text):
    """The text with comments, literals and preprocessor lines blanked (newlines kept), so that
    braces and parentheses left are code."""
    out, i, n = [], 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # a directive, with its backslash continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j) or " ")
            i = j
            continue
        if c == "/" and text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + "\n" * text.count("\n", i, j) + c)
            i = j + 1
            line_start = False
            continue
        if c in "<%" and text.startswith(("<%", "%>"), i):
            out.append("{ " if c == "<" else " }")  # digraphs: <% %> are { }
            i += 2
            line_start = False
            continue
        out.append(c)
        if c == "\n":
            line_start = True
        elif not c.isspace():
            line_start = False
        i += 1
    return "".join(out)


class Unread(Exception):
    """Code the scanner cannot read without guessing: it says where, so no function goes uncounted
    (adv-27: a K&R definition, a body opened by a macro, an #if with two heads were skipped, and
    every function after them in the file with them)."""


def line_of(code, i):
    return code.count("\n", 0, i) + 1


def functions(text):
    """(name, first line, line count) of each function defined in text; Unread when its braces do
    not pair up (a macro or an #if branch holds one) or a body's head is not read."""
    code = strip(text)
    found, depth, open_fn = [], 0, None
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                open_fn = definition(code, i)
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                raise Unread(f"line {line_of(code, i)}: a '}}' closes nothing (a '{{' in a macro or an #if branch?)")
            if depth == 0 and open_fn:
                name, start = open_fn
                found.append((name, start, line_of(code, i) - start + 1))
                open_fn = None
    if depth:
        raise Unread(f"{depth} '{{' never closed (a '}}' in a macro or an #if branch?)")
    return found


def definition(code, brace):
    """(name, line) when the "{" at brace, at depth 0, opens a function body: the code before it
    ends in a parameter list's ")" after a name; else None (a struct, an initialiser)."""
    head = code[:brace].rstrip()
    if head.endswith(";"):
        raise Unread(f"line {line_of(code, brace)}: a body after ';' (a K&R definition?): write the "
                     "parameters' types in the parameter list")
    found = head.endswith(")") and name_before(head)
    if found is None:
        tail = head[max(0, head.rfind("=")):]
        if not re.search(r"=\s*\([^()]*\)$", tail):  # a compound literal's (T){ is no function
            raise Unread(f"line {line_of(code, brace)}: a body after ')' without a name before its "
                         "parameter list")
        return None
    if not found:
        return None
    name, at = found
    return name, line_of(code, at)


def name_before(head):
    """(name, offset) of the function whose parameter list ends head; a function returning a
    function pointer, `void (*pick(int k))(int)`, is named inside the parentheses before its
    result's parameter list. None: no name there."""
    level, j = 0, len(head) - 1
    while j >= 0:
        level += {")": 1, "(": -1}.get(head[j], 0)
        if level == 0:
            break
        j -= 1
    m = IDENT.search(head[:j + 1])
    if m:
        return m.group(1), m.start(1)
    inner = head[:j].rstrip()
    if inner.endswith(")") and inner[:-1].rstrip().endswith(")"):
        return name_before(inner[:-1].rstrip())
    return None


SELF_TEST = """#define BODY { return 1; }
/* a comment's { brace */
static const struct { int a; } kT[] = {{1}, {2}};
static int
two_lines(int x) {
  const char *s = "}{"; char c = '{';
  return x + s[0] + c;
}
""" + "int long_one(void) {\n" + "  x++;\n" * 101 + "}\n"


def self_test():
    """The scanner on a text with each thing it must not take for a function's brace."""
    got = functions(SELF_TEST)
    want = [("two_lines", 5, 4), ("long_one", 9, 103)]
    if got != want:
        print(f"FAIL: the scanner read {got}, not {want}")
        return False
    return True


def all_functions(root, unread):
    for path in sources(root):
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
            try:
                rows = functions(fh.read())
            except Unread as e:
                unread.append(f"{path}: {e}")
                continue
            for name, line, length in rows:
                yield path, name, line, length


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    if not self_test():
        return 1
    root, args = argv[1], argv[2:]
    opts = dict(zip(args[::2], args[1::2]))
    unread = []
    rows = sorted(all_functions(root, unread), key=lambda r: (-r[3], r[0], r[1]))
    for u in unread:
        print(f"FAIL {u}: not counted")
    if "--limit" not in opts:
        for path, name, line, length in rows[:int(opts.get("--top", 10))]:
            print(f"{length:5d}  {path}:{line}  {name}")
        return 1 if unread else 0
    limit = int(opts["--limit"])
    allowed = set()
    with open(opts["--allow"], encoding="utf-8") as fh:
        for raw in fh:
            raw = raw.split("#", 1)[0].split()
            if raw:
                allowed.add((raw[0], raw[1]))
    fail, over = len(unread), set()
    for path, name, line, length in rows:
        if length <= limit:
            continue
        over.add((path, name))
        if (path, name) in allowed:
            print(f"allowed  {path}:{line} {name}: {length} lines (being split)")
            continue
        print(f"FAIL {path}:{line} {name}: {length} lines, over {limit}: split it into named steps")
        fail += 1
    for path, name in sorted(allowed - over):
        print(f"FAIL {opts['--allow']}: {path} {name} is no longer over {limit} lines "
              "(or no longer exists): take it off the list")
        fail += 1
    print(f"{len(rows)} functions in {len(sources(root))} files; {len(over)} over {limit} lines, "
          f"{fail} failures")
    if len(rows) < 1000:
        print(f"FAIL: only {len(rows)} functions found: the scanner is broken")
        return 1
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
