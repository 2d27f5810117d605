#!/usr/bin/env bash
# render: the targets the controller would write, read back and compared with what the
# reconciler's po_Consul_Plan must give (a pre-existing ServiceDefaults keeps its builtin/lua
# extension and loses only our old entry; a missing ProxyDefaults is created); YAML quoting;
# invalid inputs reported on stderr with exit 1.
. tests/cli/lib.sh
r=$data/render

"$bin" render -f "$r" >"$work/out" 2>"$work/err"
check "render" 0 $? "$work/err" ""
# Read back through the engine's YAML reader (cli_yaml2json) and compared as data: jq's sorted,
# indented form of it against the golden file (PO_UPDATE_GOLDEN=1 rewrites it: review the diff).
"$yaml2json" "$work/out" >"$work/got.json"
check "render reads back" 0 $?
jq -S . "$work/got.json" >"$work/got.sorted.json"
golden "render parsed back" 0 $? "$work/got.sorted.json" "$data/render.expected.json"
# Sorted keys, explicit documents: the same bytes every run, whatever the input order.
{ cat "$r/overrides.yaml"; echo ---; cat "$r/servicedefaults.yaml"; } >"$work/swapped.yaml"
"$bin" render -f "$work/swapped.yaml" >"$work/out2" 2>&1
check "render deterministic" 0 $?
cmp -s "$work/out" "$work/out2"
check "render same bytes" 0 $?
head -2 "$work/out" >"$work/head"
check "render starts" 0 0 "$work/head" "---
apiVersion: consul.hashicorp.com/v1alpha1"

# Strings YAML would read as something else stay strings: quoted in the golden file (YAML 1.1
# words such as "no" too, which the engine's YAML 1.2 reader would read as strings anyway), and
# read back as the same strings.
"$bin" render -f "$data/quoting.yaml" >"$work/out" 2>&1
golden "render quoting" 0 $? "$work/out" "$data/quoting.out.yaml"
"$yaml2json" "$work/out" >"$work/got.json"
jqcheck "render quoting read back" "$work/got.json" '.[0].spec.envoyExtensions[0].arguments ==
  {"a": "true", "b": "1.5", "c": "", "d": "null", "e": "no", "f": "x: y", "g": "01"}'

# Invalid PropertyOverrides: reported on stderr as validate reports them, exit 1; the valid
# ones still rendered.
"$bin" render -f "$data/mixed.yaml" >"$work/out" 2>"$work/err"
check "render invalid" 1 $?
contains "render invalid stderr" "$work/err" "$data/mixed.yaml:42:7: error: document 3: PropertyOverride shop/bad: Patches[1] /outlier_detection/max_ejection_percent: invalid Patches[1]: /outlier_detection/max_ejection_percent: 150 violates uint32 lte 100"
contains "render invalid summary" "$work/err" "1 valid, 1 invalid, 1 skipped"
contains "render valid one" "$work/out" "name: good"
"$bin" render -f "$data/broken.yaml" >"$work/out" 2>"$work/err"
check "render unreadable" 2 $?
# Output that cannot be written: exit 2 and a message, never 0.
"$bin" render -f "$r" >/dev/full 2>"$work/err"
check "render full disk" 2 $? "$work/err" "propertyoverride render: cannot write the rendered YAML: No space left on device"
"$bin" render -f "$data/mixed.yaml" >"$work/out" 2>/dev/full
check "render report to a full disk" 2 $?
# Links to directories (here loops), as validate -f reports them: not followed, listed.
mkdir -p "$work/loops"
cp "$r"/*.yaml "$work/loops/"
ln -s . "$work/loops/a"
ln -s . "$work/loops/b"
timeout 60 "$bin" render -f "$work/loops" >"$work/out" 2>"$work/err"
check "render loops" 0 $? "$work/err" "$work/loops/a: not read: a symbolic link to a directory: not followed
$work/loops/b: not read: a symbolic link to a directory: not followed
4 valid, 0 invalid, 0 skipped; 2 entries not read"
"$bin" render >"$work/out" 2>&1
check "render usage" 2 $?
"$bin" render --help >"$work/out" 2>&1
check "render help" 0 $?
contains "render help text" "$work/out" "usage: propertyoverride render -f FILE|DIR|- [-f ...] [--verbose]"
finish
