#!/usr/bin/env bash
# validate -f on small fixtures: exact text, JSON and GitHub outputs, line numbers, exit codes,
# directory walking, List kinds, skipped kinds, stdin, unreadable input.
. tests/cli/lib.sh
m=$data/mixed.yaml

"$bin" validate -f "$m" >"$work/out" 2>&1
check "text" 1 $? "$work/out" "$m:17:7: warning: document 1: PropertyOverride shop/good: Patches[1] /max_requests_per_connection: /max_requests_per_connection: field 'max_requests_per_connection' of envoy.config.cluster.v3.Cluster is deprecated in Envoy
$m:42:7: error: document 3: PropertyOverride shop/bad: Patches[1] /outlier_detection/max_ejection_percent: invalid Patches[1]: /outlier_detection/max_ejection_percent: 150 violates uint32 lte 100
$m:46:7: error: document 3: PropertyOverride shop/bad: Patches[2] /outlier_detection/max_ejection_percentage: invalid Patches[2]: no match for field 'max_ejection_percentage'! (did you mean 'max_ejection_percent'?)
${api_consul}
1 valid, 1 invalid, 1 skipped"

"$bin" validate -f "$m" --verbose >"$work/out" 2>&1
check "verbose" 1 $?
contains "verbose field list" "$work/out" "    available envoy.config.cluster.v3.OutlierDetection fields:"
contains "verbose truncation" "$work/out" '    First 10 fields for this message included, configure with `Debug = true` to print all.'

"$bin" validate -f "$m" --output github >"$work/out" 2>&1
check "github" 1 $? "$work/out" "::warning file=$m,line=17,col=7,title=PropertyOverride shop/good Patches[1] /max_requests_per_connection::/max_requests_per_connection: field 'max_requests_per_connection' of envoy.config.cluster.v3.Cluster is deprecated in Envoy
::error file=$m,line=42,col=7,title=PropertyOverride shop/bad Patches[1] /outlier_detection/max_ejection_percent::invalid Patches[1]: /outlier_detection/max_ejection_percent: 150 violates uint32 lte 100
::error file=$m,line=46,col=7,title=PropertyOverride shop/bad Patches[2] /outlier_detection/max_ejection_percentage::invalid Patches[2]: no match for field 'max_ejection_percentage'! (did you mean 'max_ejection_percent'?)
${api_consul_github}
1 valid, 1 invalid, 1 skipped"

# GitHub escaping: %, CR and LF in data; also ':' and ',' in properties.
cp "$m" "$work/100%,a:b.yaml"
"$bin" validate -f "$work/100%,a:b.yaml" -o github -v >"$work/out" 2>&1
check "github escaped" 1 $?
contains "github file escaped" "$work/out" "::error file=${work//:/%3A}/100%25%2Ca%3Ab.yaml,line=46,col=7,"
contains "github newline escaped" "$work/out" "(did you mean 'max_ejection_percent'?)%0Aavailable envoy.config.cluster.v3.OutlierDetection fields:%0Aconsecutive_5xx%0A"

# Strings a manifest controls (file name, name, namespace, path, keys) with line breaks, a forged
# workflow command and terminal escapes: printed visibly escaped, so no line of the output is
# anything but a finding; only the engine's own field list spans lines (verbose). Golden files,
# with the temporary directory written as WORK.
evil="$work"/$'e\n::warning file=f::forged\e[2J.yaml'
cp "$data/escape.yaml" "$evil"
for v in text:-otext text-verbose:-v github:-ogithub github-verbose:-ogithub\ -v; do
  # shellcheck disable=SC2086 # the flags are words
  "$bin" validate -f "$evil" ${v#*:} >"$work/raw" 2>&1
  rc=$?
  sed "s|$work|WORK|g" "$work/raw" >"$work/out"
  golden "escape ${v%%:*}" 1 $rc "$work/out" "$data/escape.${v%%:*}.golden"
  # No raw control character but the line breaks, and every line a finding (or the summary,
  # or the indented field list).
  if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$work/raw" || grep -qv -e '^WORK/' -e '^::error' -e '^::warning' -e '^    ' -e '^0 valid' -e '^Envoy API: ' -e '^::notice title=Envoy API::' "$work/out"; then
    echo "FAIL escape ${v%%:*}: a raw control character or a stray line"; fail=$((fail+1))
  else pass=$((pass+1)); fi
done
# JSON keeps the exact strings (json-c escapes them).
"$bin" validate -f "$evil" -o json >"$work/out" 2>&1
check "escape json" 1 $?
jqcheck "escape json exact" "$work/out" '.findings[0] | .file == $f and (.path | startswith("/outlier_detection/x\n::warning file=forged.yaml,line=1::forged\u001b[2J"))' --arg f "$evil"
# A file name that starts like a workflow command gets ./ in front (the same file).
cp "$data/tree/nested/b.yml" "$work/::warning x.yaml"
(cd "$work" && "$bin" validate -f "::warning x.yaml") >"$work/out" 2>&1
check "colon file name" 1 $?
contains "colon file name prefixed" "$work/out" "./::warning x.yaml:9:7: error:"

"$bin" validate -f "$m" --output json >"$work/out" 2>&1
check "json" 1 $?
jqcheck "json summary" "$work/out" '.summary == {"valid": 1, "invalid": 1, "skipped": 1, "unreadable": 0, "not_read": 0, "files_read": 1}'
jqcheck "json findings" "$work/out" '[.findings[] | [.severity, .code, .file, .document, .line, .column, .kind, .namespace,
    .name, .patch, .path, .hint]] ==
  [["warning", "deprecated", $m, 1, 17, 7, "PropertyOverride", "shop", "good", 1, "/max_requests_per_connection", null],
   ["error", "envoy-rule", $m, 3, 42, 7, "PropertyOverride", "shop", "bad", 1, "/outlier_detection/max_ejection_percent", null],
   ["error", "consul", $m, 3, 46, 7, "PropertyOverride", "shop", "bad", 2, "/outlier_detection/max_ejection_percentage",
    "did you mean '"'"'max_ejection_percent'"'"'?"]]' --arg m "$m"
jqcheck "json message unfolded" "$work/out" '.findings[2].message | startswith("invalid Patches[2]: no match for field '"'"'max_ejection_percentage'"'"'!\navailable envoy.config.cluster.v3.OutlierDetection fields:\n")'
jqcheck "json message" "$work/out" '.findings[1].message == "invalid Patches[1]: /outlier_detection/max_ejection_percent: 150 violates uint32 lte 100"'

# What only the resource decides is a warning of its own code, which says it is left to preview
# (issue 22): the ClusterLoadAssignment the patch creates on a cluster without one lacks its name.
"$bin" validate -f "$data/preview/created-parent-po.yaml" --output json >"$work/out" 2>&1
check "json left to preview" 0 $?
jqcheck "json left to preview code" "$work/out" '[.findings[] | [.severity, .code, .patch]] == [["warning", "envoy-rule-if-resource", 0], ["warning", "envoy-rule-if-resource", 1]] and (.findings[0].message | contains("`propertyoverride preview` judges it"))'


# Directories: recursive, sorted, only *.yaml/*.yml/*.json (tree/notes.txt is not read, and said so).
"$bin" validate -f "$data/tree" >"$work/out" 2>&1
check "tree" 1 $? "$work/out" "$data/tree/nested/b.yml:9:7: error: document 1: PropertyOverride tree-b: Patches[0] /connect_timeout: invalid Patches[0]: /connect_timeout: 0s violates duration gt 0s
$data/tree/notes.txt: not read: not named *.yaml, *.yml or *.json
${api_consul}
1 valid, 1 invalid, 1 skipped; 1 entry not read"
"$bin" validate -f "$data/tree" -o json >"$work/out" 2>&1
jqcheck "tree json not_read" "$work/out" '.summary.not_read == 1 and .summary.files_read == 3 and .not_read == [{"path": ($d + "/tree/notes.txt"), "reason": "not named *.yaml, *.yml or *.json"}]' --arg d "$data"

# A List (JSON, no positions): items checked one by one, the Service skipped.
"$bin" validate -f "$data/list.json" >"$work/out" 2>&1
check "list" 1 $? "$work/out" "$data/list.json: error: document 1 items[1]: PropertyOverride from-list: Patches[0] /per_connection_buffer_limit_bytes: invalid Patches[0]: patch value type string could not be applied to target field type 'google.protobuf.UInt32Value'
${api_consul}
0 valid, 1 invalid, 1 skipped"
"$bin" validate -f - <"$data/list.json" >"$work/out" 2>&1
check "list stdin" 1 $? "$work/out" "-: error: document 1 items[1]: PropertyOverride from-list: Patches[0] /per_connection_buffer_limit_bytes: invalid Patches[0]: patch value type string could not be applied to target field type 'google.protobuf.UInt32Value'
${api_consul}
0 valid, 1 invalid, 1 skipped"

# A ServiceDefaults: its builtin/property-override entry under Consul's wire typing (a
# one-element list is unwrapped, as Consul's decoder does); builtin/lua is not ours to check.
"$bin" validate -f "$data/servicedefaults.yaml" >"$work/out" 2>&1
check "servicedefaults" 1 $? "$work/out" "$data/servicedefaults.yaml:15:13: error: document 1: ServiceDefaults api: spec.envoyExtensions[1] Patches[0] /response_headers_to_remove: invalid Patches[0]: patch value type string could not be applied to target field type 'repeated string'
${api_consul}
0 valid, 1 invalid, 0 skipped"

# Exit 2: unreadable or unparsable, and what could be read is still reported.
"$bin" validate -f "$data/broken.yaml" -f "$data/tree/a.yaml" >"$work/out" 2>&1
check "broken" 2 $? "$work/out" "$data/broken.yaml:4:1: error: line 4, column 1: invalid YAML: did not find expected ',' or ']' while parsing a flow sequence
${api_consul}
1 valid, 0 invalid, 0 skipped, 1 unreadable"
# Findings come in the order of the files given, an unreadable one in its place.
"$bin" validate -f "$data/servicedefaults.yaml" -f "$data/broken.yaml" -f "$data/tree/nested/b.yml" >"$work/out" 2>&1
check "order" 2 $? "$work/out" "$data/servicedefaults.yaml:15:13: error: document 1: ServiceDefaults api: spec.envoyExtensions[1] Patches[0] /response_headers_to_remove: invalid Patches[0]: patch value type string could not be applied to target field type 'repeated string'
$data/broken.yaml:4:1: error: line 4, column 1: invalid YAML: did not find expected ',' or ']' while parsing a flow sequence
$data/tree/nested/b.yml:9:7: error: document 1: PropertyOverride tree-b: Patches[0] /connect_timeout: invalid Patches[0]: /connect_timeout: 0s violates duration gt 0s
${api_consul}
0 valid, 2 invalid, 0 skipped, 1 unreadable"
"$bin" validate -f "$work/missing.yaml" >"$work/out" 2>&1
check "missing" 2 $? "$work/out" "$work/missing.yaml: error: cannot open: No such file or directory
0 valid, 0 invalid, 0 skipped, 1 unreadable"
"$bin" validate -f "$data/broken.yaml" -o json >"$work/out" 2>&1
check "broken json" 2 $?
jqcheck "broken json content" "$work/out" '.findings[0] | [.code, .line, .kind] == ["input", 4, null]'

# Directory loops: two symbolic links back to ancestors (and one to itself) once made the walk
# take 2^32 paths. A link to a directory is not descended into at all now (find without -L; a
# link to / walked the whole file system): each is listed as not read; a link to itself is a
# link loop (exit 2), promptly.
mkdir -p "$work/loops/sub"
cp "$data/tree/a.yaml" "$work/loops/"
ln -s .. "$work/loops/sub/up"
ln -s . "$work/loops/self"
ln -s ../sub "$work/loops/sub/again"
ln -s ../../loops "$work/loops/sub/round"
ln -s me "$work/loops/me"
timeout 60 "$bin" validate -f "$work/loops" >"$work/out" 2>&1
check "loops" 2 $? "$work/out" "$work/loops/me: error: symbolic link loop: Too many levels of symbolic links
$work/loops/self: not read: a symbolic link to a directory: not followed
$work/loops/sub/again: not read: a symbolic link to a directory: not followed
$work/loops/sub/round: not read: a symbolic link to a directory: not followed
$work/loops/sub/up: not read: a symbolic link to a directory: not followed
${api_consul}
1 valid, 0 invalid, 0 skipped, 1 unreadable; 4 entries not read"
# Two links to one sibling: the sibling is read, once; the links are not followed.
mkdir -p "$work/twice/real"
cp "$data/tree/a.yaml" "$work/twice/real/"
ln -s real "$work/twice/link1"
ln -s real "$work/twice/link2"
timeout 60 "$bin" validate -f "$work/twice" >"$work/out" 2>&1
check "twice" 0 $? "$work/out" "$work/twice/link1: not read: a symbolic link to a directory: not followed
$work/twice/link2: not read: a symbolic link to a directory: not followed
${api_consul}
1 valid, 0 invalid, 0 skipped; 2 entries not read"
# A link to a file: read when the file is inside the directory given, else not read (its content
# could reach the log in an error message).
mkdir -p "$work/flinks/in"
cp "$data/tree/a.yaml" "$work/flinks/in/a.yaml"
ln -s in/a.yaml "$work/flinks/inside.yaml"
printf 'secret: [\n' >"$work/outside.yaml"
ln -s "$work/outside.yaml" "$work/flinks/outside.yaml"
timeout 60 "$bin" validate -f "$work/flinks" >"$work/out" 2>&1
check "links to files" 0 $? "$work/out" "$work/flinks/outside.yaml: not read: a symbolic link to a file outside the directory given: not followed
${api_consul}
2 valid, 0 invalid, 0 skipped; 1 entry not read"

# Output that cannot be written (a full disk): exit 2 and a message, in every format.
for o in text json github; do
  "$bin" validate -f "$m" -o $o >/dev/full 2>"$work/err"
  check "full disk $o" 2 $? "$work/err" "propertyoverride validate: cannot write the report: No space left on device"
done

# The document stream as kubectl cuts it (tests/vectors/yaml doc*.yaml hold kubectl's own verdicts):
# what kubectl refuses is unreadable input naming file and line; what it reads is read.
y=tests/vectors/yaml/cases
for c in "docsep5:1:4: error: line 1, column 4: invalid Yaml document separator: 5" \
         "docsepmap:1:4: error: line 1, column 4: invalid Yaml document separator: !!map" \
         "docsepblock:1:4: error: line 1, column 4: invalid Yaml document separator: |" \
         "docsepx:17:4: error: line 17, column 4: invalid Yaml document separator: x: 1" \
         "docdirective:2:1: error: line 2, column 1: invalid YAML: did not find expected <document start>" \
         "doctrailing:19:1: error: line 19, column 1: invalid YAML: did not find expected node content" \
         "docscalar:1:1: error: document 1: invalid object to validate" \
         "doclist:1:1: error: document 1: invalid object to validate: a manifest is a mapping (apiVersion, kind, ...), not a list" \
         "doclist2:18:1: error: document 2: invalid object to validate"; do
  name=${c%%:*}
  "$bin" validate -f "$y/$name.yaml" >"$work/out" 2>&1
  check "stream $name" 2 $?
  contains "stream $name message" "$work/out" "$y/$name.yaml:${c#*:}"
  "$bin" render -f "$y/$name.yaml" >/dev/null 2>"$work/out"
  check "render stream $name" 2 $?
done
for name in docaftergarbage docsepcomment docnulls; do
  "$bin" validate -f "$y/$name.yaml" >"$work/out" 2>&1
  check "stream $name read" 1 $? # read as kubectl reads it; its /x path is what is invalid
  contains "stream $name one object" "$work/out" "0 valid, 1 invalid, 0 skipped"
done

# Exit 0, and usage errors.
"$bin" validate -f "$data/tree/a.yaml" >"$work/out" 2>&1
check "ok" 0 $? "$work/out" "${api_consul}
1 valid, 0 invalid, 0 skipped"
"$bin" validate -f "$m" -o xml >"$work/out" 2>&1
check "bad output" 2 $?
contains "bad output message" "$work/out" "propertyoverride validate: --output must be text, json or github"
"$bin" validate -f "$m" --consul-arguments "$m" >"$work/out" 2>&1
check "both modes" 2 $?
contains "both modes message" "$work/out" "propertyoverride validate: -f does not go with --consul-arguments, --extension-name or --convention"
"$bin" validate --help >"$work/out" 2>&1
check "help" 0 $?
contains "help names -f" "$work/out" "usage: propertyoverride validate -f FILE|DIR|- [-f ...] [--output text|json|github] [--verbose]"
finish
