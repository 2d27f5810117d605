"""The include graph of the mesh layer, read from the sources (what a compile cannot show: files
of one library, or of libraries that may see each other, including one another).

Files read: controller/targets, controller/meshes (the table and every mesh folder, their
reconcile/ parts included) and controller/reconcile. A unit is a file name without its extension
in one module folder (istio.h and istio.c of controller/meshes/istio are the unit "istio"); a
name is used by one folder only, so a unit is one concern.
Rules, each a list of sentences naming the files (empty: the rule holds):
  - mesh_rule: a file of a mesh folder (controller/meshes/<mesh>/) includes nothing of another
    mesh's folder, nor the mesh table (controller/meshes/include, controller/meshes/src), which
    lists every mesh; the table is above the meshes, the meshes above the core.
  - core_rule: a file of controller/targets includes nothing of controller/meshes or
    controller/reconcile.
  - cycles: the graph of the units of controller/targets and controller/meshes has no circle
    (controller/reconcile's own units are listed, its circles reported apart: reconcile_cycles).
usage: /usr/bin/python3 include_graph.py SOURCE_DIR  (prints the unit graph and the verdicts)"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def _files(root):
    out = []
    for top in ("controller/targets", "controller/meshes", "controller/reconcile"):
        for d, _, names in os.walk(os.path.join(root, top)):
            out += [os.path.join(d, n) for n in names if n.endswith((".c", ".h"))]
    return sorted(out)


def _roots(root):
    """The directories a quoted include is looked up in, as the libraries' include paths give them
    (each folder's include/, reconcile's private src/, the mesh folders' reconcile/)."""
    roots = []
    for d, subdirs, _ in os.walk(os.path.join(root, "controller")):
        for s in subdirs:
            if s == "include" or (s == "reconcile" and "meshes" in d) or (s == "src" and d.endswith("reconcile")):
                roots.append(os.path.join(d, s))
    return sorted(roots)


def graph(root):
    """{file: [included file, ...]} over the region (includes resolved like the compiler: the
    including file's own directory first, then the include roots)."""
    roots, g = _roots(root), {}
    for f in _files(root):
        with open(f, encoding="utf-8") as h:
            text = h.read()
        deps = []
        for inc in INCLUDE.findall(text):
            for base in [os.path.dirname(f)] + roots:
                cand = os.path.normpath(os.path.join(base, inc))
                if os.path.isfile(cand):
                    deps.append(cand)
                    break
        g[f] = deps
    return g


def _mesh_of(root, f):
    """The mesh folder a file is in ("consul", ...), "table" for the table, None outside."""
    rel = os.path.relpath(f, os.path.join(root, "controller", "meshes"))
    if rel.startswith(".."):
        return None
    first = rel.split(os.sep)[0]
    return "table" if first in ("include", "src", "CMakeLists.txt", "README.md") else first


def mesh_rule(root, g):
    bad = []
    for f, deps in g.items():
        m = _mesh_of(root, f)
        if m in (None, "table"):
            continue
        for d in deps:
            o = _mesh_of(root, d)
            if o is not None and o != m:
                what = "the mesh table" if o == "table" else f"mesh '{o}'"
                bad.append(f"{os.path.relpath(f, root)} (mesh '{m}') includes {os.path.relpath(d, root)} ({what})")
    return bad


def core_rule(root, g):
    bad = []
    core = os.path.join(root, "controller", "targets") + os.sep
    for f, deps in g.items():
        if not f.startswith(core):
            continue
        above = [os.path.join(root, "controller", m) + os.sep for m in ("meshes", "reconcile")]
        bad += [f"{os.path.relpath(f, root)} (the core) includes {os.path.relpath(d, root)}" for d in deps
                if any(d.startswith(a) for a in above)]
    return bad


def unit(f):
    return os.path.splitext(os.path.basename(f))[0]


def folder(f):
    """The module folder a file belongs to: its path up to include/, src/ or a mesh's reconcile/."""
    parts = f.split(os.sep)
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] in ("include", "src") or (parts[i] == "reconcile" and "meshes" in parts[:i]):
            return os.sep.join(parts[:i])
    return os.path.dirname(f)


def units(root, g):
    """{unit: set of units it includes}, and the stems found in two places (a rule of its own:
    a unit must be one concern)."""
    where, u, dup = {}, {}, []
    for f in g:
        k = unit(f)
        d = folder(f)
        if where.setdefault(k, d) != d:
            dup.append(f"{k}: in {os.path.relpath(where[k], root)} and {os.path.relpath(d, root)}")
        u.setdefault(k, set())
    for f, deps in g.items():
        u[unit(f)] |= {unit(d) for d in deps if d in g and unit(d) != unit(f)}
    return u, dup


def cycles(u):
    """Each circle found, as "a -> b -> a" (one per strongly connected part of more than one unit)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(u[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(" <-> ".join(sorted(part)))

    sys.setrecursionlimit(10000)
    for v in sorted(u):
        if v not in index:
            visit(v)
    return out


def layer(root, g, u, tops):
    """u restricted to the units whose files are under controller/<top> for a top of `tops`."""
    inside = {unit(f) for f in g if any(f.startswith(os.path.join(root, "controller", t) + os.sep) for t in tops)}
    return {k: {w for w in v if w in inside} for k, v in u.items() if k in inside}


def reconcile_cycles(root):
    g = graph(root)
    u, _ = units(root, g)
    return cycles(layer(root, g, u, ("reconcile",)))


def check(root):
    """The sentences of every broken rule (empty: all hold)."""
    g = graph(root)
    u, dup = units(root, g)
    return mesh_rule(root, g) + core_rule(root, g) + [f"unit name used twice: {d}" for d in dup] + \
        [f"circle of files: {c}" for c in cycles(layer(root, g, u, ("targets", "meshes")))]


if __name__ == "__main__":
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    g = graph(root)
    u, _ = units(root, g)
    for k in sorted(u):
        print(f"{k} -> {', '.join(sorted(u[k])) or '-'}")
    bad = check(root)
    print("\n".join(bad) if bad else "all rules hold")
    for c in reconcile_cycles(root):
        print(f"(not a rule yet) circle inside controller/reconcile: {c}")
    sys.exit(1 if bad else 0)
