#!/usr/bin/python3
"""render's YAML read back by two real readers (t_yaml_quoting.sh).

Strings, as values and as keys of another extension's arguments in a ServiceDefaults that render
writes out (others' extensions are kept as they are), must read back as the same strings in
kubectl (Go's yaml.v2 through sigs.k8s.io/yaml: how manifests are read; `kubectl annotate
--local` reads without a cluster) and in PyYAML (a YAML 1.1 reader). The strings: every one of
the corpus file (each disagreement ever found, and the known traps), then PO_YAML_CASES (default
3000) generated from PO_YAML_SEED (default: random; printed) out of tokens readers type
(numbers in every base, booleans, nulls, timestamps, indicators, blanks).

usage: yaml_readback.py PROPERTYOVERRIDE CORPUS.json WORKDIR
"""
import json
import os
import random
import subprocess
import sys

import yaml

TOKENS = [
    "0", "1", "7", "9", "10", "017", "0o17", "0x1f", "0X1F", "0b101", "1_000", "_", ".", ":", "-", "+", "e", "E",
    "e+3", "1e3", "inf", "Inf", "nan", "NaN", ".inf", ".nan", "y", "Y", "n", "N", "yes", "No", "on", "OFF", "true",
    "False", "null", "Null", "~", "=", "<<", " ", "  ", "#", " #", "- ", ": ", ":", "t", "T", "Z", "2001-12-14",
    "21:59:43", "1:30", "a", "s", "x", "v1", "é", "中", "\t", "\n", "'", '"', "!", "&", "*", "%", "@", "`", "|",
    ">", "?", ",", "[", "]", "{", "}", "---", "...", "\\", "/", "\x01", "\x7f", "\u2028", "\ufeff",
]


def generate(rng, n, seen):
    """n strings not in seen, each one to five tokens (bounded tries: the short ones run out)."""
    out = []
    for _ in range(50 * n):
        if len(out) == n:
            break
        s = "".join(rng.choice(TOKENS) for _ in range(rng.choice((1, 2, 2, 3, 3, 4, 5))))
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def manifests(strings):
    values = {"v%05d" % i: s for i, s in enumerate(strings)}
    # A key holding U+0000 is refused by the readers (keys are C strings there: it would be cut);
    # nul_keys_refused checks that, so here only values carry it.
    keys = {s: "k" for s in strings if "\0" not in s}
    sd = {
        "apiVersion": "consul.hashicorp.com/v1alpha1", "kind": "ServiceDefaults", "metadata": {"name": "q"},
        "spec": {"envoyExtensions": [{"name": "builtin/lua", "arguments": {"values": values, "keys": keys}}]},
    }
    po = {
        "apiVersion": "propertyoverride.io/v1alpha1", "kind": "PropertyOverride", "metadata": {"name": "q"},
        "spec": {"targetRef": {"name": "q"}, "patches": [{
            "resourceFilter": {"resourceType": "cluster", "trafficDirection": "outbound"},
            "op": "remove", "path": "/circuit_breakers"}]},
    }
    return sd, po


def lua_arguments(doc):
    for e in doc["spec"]["envoyExtensions"]:
        if e["name"] == "builtin/lua":
            return e["arguments"]
    raise ValueError("no builtin/lua extension")


def compare(reader, got, want, bad):
    for k, s in want["values"].items():
        g = got.get("values", {}).get(k, "<missing>")
        if g != s:
            bad.append((reader, "value", s, g))
    got_keys = got.get("keys", {})
    for s in want["keys"]:
        if s not in got_keys:
            bad.append((reader, "key", s, sorted(set(got_keys) - set(want["keys"]), key=repr)[:3]))


def render(binary, strings, work):
    """render's YAML of a ServiceDefaults holding the strings, and that ServiceDefaults."""
    sd, po = manifests(strings)
    src = os.path.join(work, "in.yaml")  # JSON documents, as YAML flow (one file, two documents)
    with open(src, "w", encoding="utf-8") as f:
        f.write("---\n" + json.dumps(sd) + "\n---\n" + json.dumps(po) + "\n")
    out = os.path.join(work, "out.yaml")
    with open(out, "wb") as f:
        r = subprocess.run([binary, "render", "-f", src], stdout=f, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise RuntimeError("render: exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace")))
    return out, lua_arguments(sd)


def nul_keys_refused(binary, strings, work, bad):
    """Each string holding U+0000, as a key, is refused with the reason (never cut silently: a cut
    key can take another key's place), in YAML and in JSON."""
    for s in [s for s in strings if "\0" in s]:
        sd, _ = manifests([])
        sd["spec"]["envoyExtensions"][0]["arguments"]["keys"] = {s: "k"}
        src = os.path.join(work, "nulkey.yaml")
        with open(src, "w", encoding="utf-8") as f:
            f.write(json.dumps(sd) + "\n")
        r = subprocess.run([binary, "render", "-f", src], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode == 0 or b"U+0000" not in r.stderr:
            bad.append(("render", "key (want a refusal naming U+0000)", s, r.stderr.decode(errors="replace")[:200]))


def node_strings(node):
    """A composed mapping node as {key: value}, each scalar as its text, or (tag, text) when
    PyYAML's resolver typed it as anything but a string (composing builds no value, so `=` and
    `<<`, which its constructor refuses, are reported as what they resolved to)."""
    def scalar(n):
        return n.value if n.tag == "tag:yaml.org,2002:str" else (n.tag, n.value)
    return {scalar(k): (node_strings(v) if isinstance(v, yaml.MappingNode) else scalar(v)) for k, v in node.value}


def pyyaml(out, want, bad):
    with open(out, encoding="utf-8") as f:
        for doc in yaml.compose_all(f, Loader=yaml.SafeLoader):
            if node_strings(doc).get("kind") == "ServiceDefaults":
                spec = next(v for k, v in doc.value if k.value == "spec")
                for ext in next(v for k, v in spec.value if k.value == "envoyExtensions").value:
                    e = node_strings(ext)
                    if e.get("name") == "builtin/lua":
                        compare("PyYAML", e["arguments"], want, bad)


def kubectl(binary, strings, work, bad, limit=40):
    """kubectl's reading; a stream it refuses whole is halved until the strings it refuses are
    found one by one (at most `limit` of them)."""
    out, want = render(binary, strings, work)
    r = subprocess.run(["kubectl", "annotate", "--local", "-f", out, "po-readback=1", "-o", "json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode == 0:
        compare("kubectl", lua_arguments(json.loads(r.stdout)), want, bad)
    elif len(strings) == 1:
        bad.append(("kubectl", "string", strings[0], r.stderr.decode(errors="replace").strip()[-120:]))
    else:
        for half in (strings[:len(strings) // 2], strings[len(strings) // 2:]):
            if sum(b[0] == "kubectl" for b in bad) < limit:
                kubectl(binary, half, work, bad, limit)


def main():
    binary, corpus_path, work = sys.argv[1:4]
    seed = int(os.environ.get("PO_YAML_SEED") or random.SystemRandom().randrange(1 << 32))
    cases = int(os.environ.get("PO_YAML_CASES", "3000"))
    with open(corpus_path, encoding="utf-8") as f:
        corpus = json.load(f)
    strings = list(dict.fromkeys(corpus))
    strings += generate(random.Random(seed), cases, set(strings))
    print("yaml_readback: seed %d (PO_YAML_SEED), %d corpus + %d generated strings"
          % (seed, len(corpus), len(strings) - len(corpus)))
    bad = []
    try:
        out, want = render(binary, strings, work)
        pyyaml(out, want, bad)
        kubectl(binary, strings, work, bad)
        nul_keys_refused(binary, strings, work, bad)
    except RuntimeError as e:
        print("FAIL %s" % e)
        return 1
    for reader, where, s, g in bad[:80]:
        print("FAIL %s read the %s %s back as %s" % (reader, where, json.dumps(s, ensure_ascii=False),
                                                   json.dumps(g, ensure_ascii=False, default=str)))
    if bad:
        print("%d disagreements (PyYAML %d, kubectl %d; seed %d): add the strings to %s"
              % (len(bad), sum(b[0] == "PyYAML" for b in bad), sum(b[0] == "kubectl" for b in bad), seed,
                 corpus_path))
        return 1
    print("yaml_readback: %d strings as values and keys read back unchanged by PyYAML %s and kubectl"
          % (len(strings), yaml.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
