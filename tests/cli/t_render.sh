#!/usr/bin/env bash
# render: the targets the controller would write, parsed back and compared with what the
# reconciler's po_Consul_Plan must give (a pre-existing ServiceDefaults keeps its builtin/lua
# extension and loses only our old entry; a missing ProxyDefaults is created); YAML quoting;
# invalid inputs reported on stderr with exit 1.
. tests/cli/lib.sh
r=$data/render

"$bin" render -f "$r" >"$work/out" 2>"$work/err"
check "render" 0 $? "$work/err" ""
python3 - "$work/out" "$r/expected.json" <<'P' >"$work/py" 2>&1
import json, sys, yaml
got = list(yaml.safe_load_all(open(sys.argv[1])))
want = json.load(open(sys.argv[2]))
assert got == want, json.dumps(got, indent=1)
print("ok")
P
check "render parsed back" 0 $? "$work/py" "ok"
# Sorted keys, explicit documents: the same bytes every run, whatever the input order.
{ cat "$r/overrides.yaml"; echo ---; cat "$r/servicedefaults.yaml"; } >"$work/swapped.yaml"
"$bin" render -f "$work/swapped.yaml" >"$work/out2" 2>&1
check "render deterministic" 0 $?
cmp -s "$work/out" "$work/out2"
check "render same bytes" 0 $?
head -2 "$work/out" >"$work/head"
check "render starts" 0 0 "$work/head" "---
apiVersion: consul.hashicorp.com/v1alpha1"

# Strings YAML would read as something else stay strings.
cat >"$work/q.yaml" <<'Y'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: q}
spec:
  envoyExtensions:
    - {name: builtin/lua, arguments: {a: "true", b: "1.5", c: "", d: "null", e: "no", f: "x: y", g: "01"}}
---
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: q}
spec:
  targetRef: {name: q}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: remove
      path: /circuit_breakers
Y
"$bin" render -f "$work/q.yaml" >"$work/out" 2>&1
check "render quoting" 0 $?
python3 - "$work/out" <<'P' >"$work/py" 2>&1
import sys, yaml
d = list(yaml.safe_load_all(open(sys.argv[1])))[0]
a = d["spec"]["envoyExtensions"][0]["arguments"]
assert a == {"a": "true", "b": "1.5", "c": "", "d": "null", "e": "no", "f": "x: y", "g": "01"}, a
print("ok")
P
check "render quoting parsed" 0 $? "$work/py" "ok"

# Invalid PropertyOverrides: reported on stderr as validate reports them, exit 1; the valid
# ones still rendered.
"$bin" render -f "$data/mixed.yaml" >"$work/out" 2>"$work/err"
check "render invalid" 1 $?
contains "render invalid stderr" "$work/err" "$data/mixed.yaml:42:7: error: document 3: PropertyOverride shop/bad: Patches[1] /outlier_detection/max_ejection_percent: invalid Patches[1]: /outlier_detection/max_ejection_percent: 150 violates uint32 lte 100"
contains "render invalid summary" "$work/err" "1 valid, 1 invalid, 1 skipped"
contains "render valid one" "$work/out" "name: good"
"$bin" render -f "$data/broken.yaml" >"$work/out" 2>"$work/err"
check "render unreadable" 2 $?
"$bin" render >"$work/out" 2>&1
check "render usage" 2 $?
"$bin" render --help >"$work/out" 2>&1
check "render help" 0 $?
contains "render help text" "$work/out" "usage: propertyoverride render -f FILE|DIR|- [-f ...] [--verbose]"
finish
