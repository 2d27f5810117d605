#!/usr/bin/env bash
# validate -f on small fixtures: exact text, JSON and GitHub outputs, line numbers, exit codes,
# directory walking, List kinds, skipped kinds, stdin, unreadable input.
. tests/cli/lib.sh
m=$data/mixed.yaml

"$bin" validate -f "$m" >"$work/out" 2>&1
check "text" 1 $? "$work/out" "$m:17:7: warning: document 1: PropertyOverride shop/good: Patches[1] /max_requests_per_connection: /max_requests_per_connection: field 'max_requests_per_connection' of envoy.config.cluster.v3.Cluster is deprecated in Envoy
$m:42:7: error: document 3: PropertyOverride shop/bad: Patches[1] /outlier_detection/max_ejection_percent: invalid Patches[1]: /outlier_detection/max_ejection_percent: 150 violates uint32 lte 100
$m:46:7: error: document 3: PropertyOverride shop/bad: Patches[2] /outlier_detection/max_ejection_percentage: invalid Patches[2]: no match for field 'max_ejection_percentage'! (did you mean 'max_ejection_percent'?)
1 valid, 1 invalid, 1 skipped"

"$bin" validate -f "$m" --verbose >"$work/out" 2>&1
check "verbose" 1 $?
contains "verbose field list" "$work/out" "    available envoy.config.cluster.v3.OutlierDetection fields:"
contains "verbose truncation" "$work/out" '    First 10 fields for this message included, configure with `Debug = true` to print all.'

"$bin" validate -f "$m" --output github >"$work/out" 2>&1
check "github" 1 $? "$work/out" "::warning file=$m,line=17,col=7,title=PropertyOverride shop/good Patches[1] /max_requests_per_connection::/max_requests_per_connection: field 'max_requests_per_connection' of envoy.config.cluster.v3.Cluster is deprecated in Envoy
::error file=$m,line=42,col=7,title=PropertyOverride shop/bad Patches[1] /outlier_detection/max_ejection_percent::invalid Patches[1]: /outlier_detection/max_ejection_percent: 150 violates uint32 lte 100
::error file=$m,line=46,col=7,title=PropertyOverride shop/bad Patches[2] /outlier_detection/max_ejection_percentage::invalid Patches[2]: no match for field 'max_ejection_percentage'! (did you mean 'max_ejection_percent'?)
1 valid, 1 invalid, 1 skipped"

# GitHub escaping: %, CR and LF in data; also ':' and ',' in properties.
cp "$m" "$work/100%,a:b.yaml"
"$bin" validate -f "$work/100%,a:b.yaml" -o github -v >"$work/out" 2>&1
check "github escaped" 1 $?
contains "github file escaped" "$work/out" "::error file=${work//:/%3A}/100%25%2Ca%3Ab.yaml,line=46,col=7,"
contains "github newline escaped" "$work/out" "(did you mean 'max_ejection_percent'?)%0Aavailable envoy.config.cluster.v3.OutlierDetection fields:%0Aconsecutive_5xx%0A"

"$bin" validate -f "$m" --output json >"$work/out" 2>&1
check "json" 1 $?
python3 - "$work/out" "$m" <<'P' >"$work/py" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["summary"] == {"valid": 1, "invalid": 1, "skipped": 1, "unreadable": 0}, d["summary"]
got = [(f["severity"], f["code"], f["file"], f["document"], f["line"], f["column"], f["kind"], f["namespace"],
        f["name"], f["patch"], f["path"], f["hint"]) for f in d["findings"]]
m = sys.argv[2]
want = [("warning", "deprecated", m, 1, 17, 7, "PropertyOverride", "shop", "good", 1, "/max_requests_per_connection", None),
        ("error", "envoy-rule", m, 3, 42, 7, "PropertyOverride", "shop", "bad", 1, "/outlier_detection/max_ejection_percent", None),
        ("error", "consul", m, 3, 46, 7, "PropertyOverride", "shop", "bad", 2, "/outlier_detection/max_ejection_percentage",
         "did you mean 'max_ejection_percent'?")]
assert got == want, got
msg = d["findings"][2]["message"]
assert msg.startswith("invalid Patches[2]: no match for field 'max_ejection_percentage'!\navailable envoy.config.cluster.v3.OutlierDetection fields:\n"), msg
assert d["findings"][1]["message"] == "invalid Patches[1]: /outlier_detection/max_ejection_percent: 150 violates uint32 lte 100"
print("ok")
P
check "json content" 0 $? "$work/py" "ok"

# Directories: recursive, sorted, only *.yaml/*.yml/*.json (tree/notes.txt is not read).
"$bin" validate -f "$data/tree" >"$work/out" 2>&1
check "tree" 1 $? "$work/out" "$data/tree/nested/b.yml:9:7: error: document 1: PropertyOverride tree-b: Patches[0] /connect_timeout: invalid Patches[0]: /connect_timeout: 0s violates duration gt 0s
1 valid, 1 invalid, 1 skipped"

# A List (JSON, no positions): items checked one by one, the Service skipped.
"$bin" validate -f "$data/list.json" >"$work/out" 2>&1
check "list" 1 $? "$work/out" "$data/list.json: error: document 1 items[1]: PropertyOverride from-list: Patches[0] /per_connection_buffer_limit_bytes: invalid Patches[0]: patch value type string could not be applied to target field type 'google.protobuf.UInt32Value'
0 valid, 1 invalid, 1 skipped"
"$bin" validate -f - <"$data/list.json" >"$work/out" 2>&1
check "list stdin" 1 $? "$work/out" "-: error: document 1 items[1]: PropertyOverride from-list: Patches[0] /per_connection_buffer_limit_bytes: invalid Patches[0]: patch value type string could not be applied to target field type 'google.protobuf.UInt32Value'
0 valid, 1 invalid, 1 skipped"

# A ServiceDefaults: its builtin/property-override entry under Consul's wire typing (a
# one-element list is unwrapped, as Consul's decoder does); builtin/lua is not ours to check.
"$bin" validate -f "$data/servicedefaults.yaml" >"$work/out" 2>&1
check "servicedefaults" 1 $? "$work/out" "$data/servicedefaults.yaml:15:13: error: document 1: ServiceDefaults api: spec.envoyExtensions[1] Patches[0] /response_headers_to_remove: invalid Patches[0]: patch value type string could not be applied to target field type 'repeated string'
0 valid, 1 invalid, 0 skipped"

# Exit 2: unreadable or unparsable, and what could be read is still reported.
"$bin" validate -f "$data/broken.yaml" -f "$data/tree/a.yaml" >"$work/out" 2>&1
check "broken" 2 $? "$work/out" "$data/broken.yaml:4:1: error: line 4, column 1: invalid YAML: did not find expected ',' or ']' while parsing a flow sequence
1 valid, 0 invalid, 0 skipped, 1 unreadable"
# Findings come in the order of the files given, an unreadable one in its place.
"$bin" validate -f "$data/servicedefaults.yaml" -f "$data/broken.yaml" -f "$data/tree/nested/b.yml" >"$work/out" 2>&1
check "order" 2 $? "$work/out" "$data/servicedefaults.yaml:15:13: error: document 1: ServiceDefaults api: spec.envoyExtensions[1] Patches[0] /response_headers_to_remove: invalid Patches[0]: patch value type string could not be applied to target field type 'repeated string'
$data/broken.yaml:4:1: error: line 4, column 1: invalid YAML: did not find expected ',' or ']' while parsing a flow sequence
$data/tree/nested/b.yml:9:7: error: document 1: PropertyOverride tree-b: Patches[0] /connect_timeout: invalid Patches[0]: /connect_timeout: 0s violates duration gt 0s
0 valid, 2 invalid, 0 skipped, 1 unreadable"
"$bin" validate -f "$work/missing.yaml" >"$work/out" 2>&1
check "missing" 2 $? "$work/out" "$work/missing.yaml: error: cannot open: No such file or directory
0 valid, 0 invalid, 0 skipped, 1 unreadable"
"$bin" validate -f "$data/broken.yaml" -o json >"$work/out" 2>&1
check "broken json" 2 $?
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); f=d["findings"][0]; assert (f["code"], f["line"], f["kind"]) == ("input", 4, None), f' "$work/out"
check "broken json content" 0 $?

# Exit 0, and usage errors.
"$bin" validate -f "$data/tree/a.yaml" >"$work/out" 2>&1
check "ok" 0 $? "$work/out" "1 valid, 0 invalid, 0 skipped"
"$bin" validate -f "$m" -o xml >"$work/out" 2>&1
check "bad output" 2 $?
contains "bad output message" "$work/out" "propertyoverride validate: --output must be text, json or github"
"$bin" validate -f "$m" --consul-arguments "$m" >"$work/out" 2>&1
check "both modes" 2 $?
contains "both modes message" "$work/out" "propertyoverride validate: -f does not go with --consul-arguments or --extension-name"
"$bin" validate --help >"$work/out" 2>&1
check "help" 0 $?
contains "help names -f" "$work/out" "usage: propertyoverride validate -f FILE|DIR|- [-f ...] [--output text|json|github] [--verbose]"
finish
