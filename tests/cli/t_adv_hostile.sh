#!/usr/bin/env bash
# Hostile files and dumps (adversarial review of issue 21 item 5, branch adv-cli): what the
# hostile-file change first let through, each check one finding of the review; every check
# failed on 1bb7fe9 and passes since branch h-cli2. Where a finding's first expectation was
# changed, the check says why (preview's memory: a refusal within the piece budget; finding 2:
# memory that does not follow the output; the @type checks' exit code taken before $(...)).
#   t_adv_hostile.sh BIN
# Memory checks use /usr/bin/time and are skipped under sanitizers (PO_SANITIZED=1).
. "$(dirname "$0")/lib.sh"
pv=$data/preview
po=$pv/consul-po.yaml
cat >"$work/every.yaml" <<'EOF'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: every}
spec:
  targetRef: {kind: ServiceDefaults, name: web}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection/max_ejection_percent
      value: 50
EOF

# rss_within NAME LIMIT_X FILE ARGS...: the command's peak RSS is within LIMIT_X times FILE's size,
# plus what preview takes on testdata's 9.5 KB dump (the binary, the schema: $base KB).
base=0
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f '%M' -o "$work/time" "$bin" preview -f "$po" --config-dump "$pv/consul-dump.json" --datacenter dc1 >/dev/null 2>&1
  base=$(tail -1 "$work/time")
fi
rss_within() {
  local name=$1 x=$2 f=$3; shift 3
  if [ ! -x /usr/bin/time ] || [ "${PO_SANITIZED:-0}" = 1 ]; then return; fi
  /usr/bin/time -f '%M' -o "$work/time" timeout 60 "$bin" "$@" >"$work/out" 2>"$work/err"
  local rc=$? rss size
  rss=$(tail -1 "$work/time"); size=$(wc -c <"$f")
  if [ "$rc" = 0 ] && [ "$rss" -le $((size * x / 1024 + base)) ]; then pass=$((pass+1));
  # or refused, saying where and what one piece may take, having taken at most that piece's
  # budget (32 MiB at least: docs/gitops.md "preview's memory") beyond the bound
  elif [ "$rc" = 2 ] && grep -q 'decoding it takes more than' "$work/err" &&
       [ "$rss" -le $((size * x / 1024 + base + 32768)) ]; then pass=$((pass+1)); else
    echo "FAIL $name: exit $rc, peak RSS $rss KB for $size bytes ($(awk -v r="$rss" -v s="$size" 'BEGIN { printf "%.1f", r * 1024 / s }')x, bound ${x}x + $base KB)"
    head -c 300 "$work/err"; fail=$((fail+1))
  fi
}

# 1. A regular file whose read blocks: /proc/kmsg (fstat: a regular file of size 0). The reader
#    clears O_NONBLOCK before reading, so validate/render/preview wait forever (root only; a CI
#    container usually is). A repository can plant it as a link: manifests/x.yaml -> /proc/kmsg.
if [ -r /proc/kmsg ]; then
  timeout 5 "$bin" validate -f /proc/kmsg >"$work/out" 2>&1 </dev/null
  rc=$?; [ $rc != 124 ] && pass=$((pass+1)) || { echo "FAIL validate -f /proc/kmsg: blocked (timeout)"; fail=$((fail+1)); }
  mkdir "$work/kmsg" && ln -s /proc/kmsg "$work/kmsg/x.yaml"
  timeout 5 "$bin" validate -f "$work/kmsg" >"$work/out" 2>&1 </dev/null
  rc=$?; [ $rc != 124 ] && pass=$((pass+1)) || { echo "FAIL validate -f DIR holding x.yaml -> /proc/kmsg: blocked (timeout)"; fail=$((fail+1)); }
  timeout 5 "$bin" preview -f "$po" --config-dump /proc/kmsg >"$work/out" 2>&1 </dev/null
  rc=$?; [ $rc != 124 ] && pass=$((pass+1)) || { echo "FAIL preview --config-dump /proc/kmsg: blocked (timeout)"; fail=$((fail+1)); }
fi

# 2. Nothing validated, exit 0: the issue asks for non-zero "when nothing was validated"; a file
#    was read, but it held nothing ("0 valid, 0 invalid, 0 skipped", the very line of the issue).
mkdir "$work/empty" "$work/cm"
: >"$work/empty/a.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' >"$work/cm/a.yaml"
timeout 10 "$bin" validate -f "$work/empty" >"$work/out" 2>&1
check "validate -f DIR holding only an empty a.yaml: nothing validated" 2 $? "$work/out"
timeout 10 "$bin" validate -f "$work/cm" >"$work/out" 2>&1
check "validate -f DIR holding only a ConfigMap: nothing validated" 2 $? "$work/out"
contains "nothing validated said" "$work/out" "nothing validated: 1 file was read, but no PropertyOverride"
timeout 10 "$bin" validate --allow-empty -f "$work/cm" >"$work/out" 2>&1
check "validate --allow-empty -f DIR holding only a ConfigMap" 0 $? "$work/out" "0 valid, 0 invalid, 1 skipped"

# 3. --output json with a file name that is not UTF-8: the bytes go out raw, and the report is
#    not JSON (RFC 8259 8.1; Python's json.load refuses it; jq silently replaces them).
mkdir "$work/nonutf"
mkfifo "$work/nonutf/$(printf 'p\xff.yaml')"
cp "$work/cm/a.yaml" "$work/nonutf/ok.yaml"
timeout 10 "$bin" validate -f "$work/nonutf" -o json >"$work/out" 2>&1
if iconv -f UTF-8 -t UTF-8 "$work/out" >/dev/null 2>&1; then pass=$((pass+1)); else
  echo "FAIL validate -o json: the report is not UTF-8 (a not_read path's raw bytes)"; fail=$((fail+1)); fi

# 3b. GitHub's runner also takes a v1 command `##[name props]data` ANYWHERE in a line
#    (actions/runner ActionCommand.TryParse: message.IndexOf("##[")), and a v2 `::name::` after
#    TrimStart() (Char.IsWhiteSpace: U+00A0, U+2003...). The text report prints both raw: a file
#    the walk lists as not read (new in this change) makes an annotation, a mask, a stop-commands.
mkdir "$work/inj"
cp "$work/cm/a.yaml" "$work/inj/a.yaml"
: >"$work/inj/notes##[error title=pwned]fake annotation"
timeout 10 "$bin" validate -f "$work/inj" >"$work/out" 2>&1
cp "$work/out" "$work/out0"
if grep -qF '##[' "$work/out"; then echo "FAIL validate text: a not-read name's '##[' printed raw (a v1 workflow command):"; cat "$work/out"; fail=$((fail+1)); else pass=$((pass+1)); fi
timeout 10 "$bin" validate -f "$(printf '\xc2\xa0::error::pwned.yaml')" >"$work/out" 2>&1
if grep -q "^$(printf '\xc2\xa0')::" "$work/out"; then echo "FAIL validate text: a line starts with U+00A0 then '::' (the runner trims it: a workflow command)"; fail=$((fail+1)); else pass=$((pass+1)); fi
# the fix (docs/gitops.md, "Reports in CI logs"): the second '#' of "##[" printed as \x23 (text,
# github) or \u0023 (preview's JSON texts); a path starting with ':' or Unicode white space after "./"
contains "validate text: '##[' neutralised" "$work/out0" 'notes#\x23[error title=pwned]fake annotation: not read'
timeout 10 "$bin" validate -f "$work/inj" -o github >"$work/out" 2>&1
if grep -qF '##[' "$work/out"; then echo "FAIL validate -o github: '##[' printed raw:"; cat "$work/out"; fail=$((fail+1)); else pass=$((pass+1)); fi
timeout 10 "$bin" validate -f "$(printf '\xe2\x80\x83::error::pwned.yaml')" >"$work/out" 2>&1
if grep -q "^$(printf '\xe2\x80\x83')::" "$work/out"; then echo "FAIL validate text: a line starts with U+2003 then '::'"; fail=$((fail+1)); else pass=$((pass+1)); fi
contains "validate text: a path starting with U+2003 after ./" "$work/out" "./$(printf '\xe2\x80\x83')::error::pwned.yaml: error"
printf '{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump","dynamic_active_clusters":[{"cluster":{"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster","name":"c##[error]x"}}]}]}' >"$work/gh.json"
timeout 10 "$bin" preview -f "$work/every.yaml" --config-dump "$work/gh.json" --datacenter dc1 >"$work/out" 2>&1
check "preview of a cluster named c##[error]x" 0 $? 
if grep -qF '##[' "$work/out"; then echo "FAIL preview text: '##[' printed raw:"; cat "$work/out"; fail=$((fail+1)); else pass=$((pass+1)); fi
contains "preview text: the name in the diff" "$work/out" '"name": "c#\u0023[error]x"'

# 4. The streamed dump reader skips every "@type" member of a per-type dump unread: a second
#    "@type" (upb: "No such field: @type", the whole decode refused it), even one holding text
#    that is not JSON at all ({]), is accepted and the preview goes ahead (exit 0).
CD='"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump"'
E='"dynamic_active_clusters":[{"cluster":{"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster","name":"c"}}]'
for cfg in "{$CD,$CD,$E}" "{$CD,\"@type\":{],$E}" "{\"@type\":7,$CD,$E}"; do
  printf '{"configs":[%s]}' "$cfg" >"$work/dt.json"
  [ "$cfg" = "{$CD,$CD,$E}" ] && { "$bin" preview -f "$work/every.yaml" --config-dump "$work/dt.json" --datacenter dc1 >"$work/out0dt" 2>&1; }
  timeout 10 "$bin" preview -f "$work/every.yaml" --config-dump "$work/dt.json" --datacenter dc1 >"$work/out" 2>&1
  # the exit code taken first: the name's $(...) would set $? to cut's
  rc=$?; check "preview of a dump with a duplicate/invalid @type ($(printf '%s' "$cfg" | cut -c70-90)...) refused" 2 $rc "$work/out"
done
contains "a second @type said" "$work/out0dt" '"@type" given twice'
contains "@type not a string said" "$work/out" '"@type" must be a string'
# brackets matched: a ']' closing a '{' is an error at that offset, column 94 here (the scan
# once counted them)
printf '{"configs":[{%s,"version_info":[{]}]}' "$CD" >"$work/dt.json"
timeout 10 "$bin" preview -f "$work/every.yaml" --config-dump "$work/dt.json" --datacenter dc1 >"$work/out" 2>&1
rc=$?; check "preview of a dump with [{] in a member" 2 $rc "$work/out"
contains "[{] said where" "$work/out" "Error parsing JSON @1:94: Expected: ',' or '}'"

# 5. preview's memory, "at most a few times its input" (t_hostile_files: within 4x): one
#    resource is still decoded whole by upb's JSON decoder (a Struct, nested Anys) and, when it
#    names a type the schema lacks, through json-c's tree too.
cl='"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster","name":"big"'
head_='{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump","dynamic_active_clusters":[{"cluster":{'
awk -v h="$head_" -v c="$cl" 'BEGIN { printf "%s%s,\"metadata\":{\"filter_metadata\":{\"k\":{\"l\":[", h, c;
  for (i = 0; i < 500000; i++) printf "%s{}", (i ? "," : ""); printf "]}}}}}]}]}\n" }' >"$work/struct.json"
rss_within "preview: one cluster with a 500,000-object Struct list (1.5 MB)" 4 "$work/struct.json" \
  preview -f "$po" --config-dump "$work/struct.json" --datacenter dc1
awk -v h="$head_" -v c="$cl" 'BEGIN { printf "%s%s,\"metadata\":{\"filter_metadata\":{\"k\":{\"l\":[", h, c;
  for (i = 0; i < 500000; i++) printf "%s0", (i ? "," : "");
  printf "]}}},\"typed_extension_protocol_options\":{\"k\":{\"@type\":\"type.googleapis.com/x.Unknown\",\"a\":1}}}}]}]}\n" }' >"$work/unk.json"
rss_within "preview: one cluster, a Struct list and an Any of an unknown type (1 MB)" 4 "$work/unk.json" \
  preview -f "$po" --config-dump "$work/unk.json" --datacenter dc1
awk -v h="$head_" -v c="$cl" 'BEGIN {
  printf "%s%s,\"typed_extension_protocol_options\":{\"k\":", h, c;
  for (i = 0; i < 25; i++) printf "{\"@type\":\"type.googleapis.com/google.protobuf.Any\",\"value\":";
  printf "{\"@type\":\"type.googleapis.com/google.protobuf.StringValue\",\"value\":\"";
  for (i = 0; i < 10000; i++) printf "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
  printf "\"}"; for (i = 0; i < 25; i++) printf "}"; printf "}}}]}]}\n" }' >"$work/anys.json"
rss_within "preview: one cluster, a 1 MB string under 25 nested Anys" 4 "$work/anys.json" \
  preview -f "$po" --config-dump "$work/anys.json" --datacenter dc1

# 6. preview's memory follows its output, not its input: every diff is held in a memory stream
#    (text) or as parsed before/after trees (json) until the end. 20,000 empty clusters (1.2 MB)
#    and a patch adding a 2,000-byte string to each.
awk 'BEGIN { printf "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\",\"dynamic_active_clusters\":[";
  for (i = 0; i < 20000; i++) printf "%s{\"cluster\":{\"@type\":\"a/envoy.config.cluster.v3.Cluster\"}}", (i ? "," : ""); printf "]}]}\n" }' >"$work/tiny.json"
v=$(printf 'y%.0s' $(seq 2000))
printf '%s\n' 'apiVersion: propertyoverride.io/v1alpha1' 'kind: PropertyOverride' 'metadata: {name: every}' 'spec:' \
  '  targetRef: {kind: ServiceDefaults, name: web}' '  patches:' \
  '    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}' \
  '      op: add' '      path: /alt_stat_name' "      value: \"$v\"" >"$work/bigval.yaml"
# The check (changed from "within 4x the dump", see docs/gitops.md "preview's memory"): the
# peak does not follow the output. The same preview giving each cluster a 1-byte value is the
# reference; 2 KB each (40 MB of diff) may cost at most 2 MB more. Before the fix: 81 MB (text)
# and 210 MB (json) against the reference's few. What the reference itself costs, ~200 bytes a
# resource (13 MB for this 1.16 MB dump of 58-byte clusters: 11x), is finding 9's, left open:
# the records of a dump of empty resources (docs/gitops.md says so).
sed 's/value: "y*"/value: "y"/' "$work/bigval.yaml" >"$work/smallval.yaml"
rss_like_output() {
  local name=$1; shift
  if [ ! -x /usr/bin/time ] || [ "${PO_SANITIZED:-0}" = 1 ]; then return; fi
  /usr/bin/time -f '%M' -o "$work/time" timeout 60 "$bin" preview -f "$work/smallval.yaml" "$@" >/dev/null 2>&1
  local ref rss rc; ref=$(tail -1 "$work/time")
  /usr/bin/time -f '%M' -o "$work/time" timeout 60 "$bin" preview -f "$work/bigval.yaml" "$@" >"$work/out" 2>"$work/err"
  rc=$?; rss=$(tail -1 "$work/time")
  if [ "$rc" = 0 ] && [ "$rss" -le $((ref + 2048)) ]; then pass=$((pass+1)); else
    echo "FAIL $name: exit $rc, peak RSS $rss KB against $ref KB with 1-byte values"; head -c 300 "$work/err"; fail=$((fail+1)); fi
}
rss_like_output "preview -o text: 20,000 clusters each given a 2 KB value" --config-dump "$work/tiny.json" --datacenter dc1
rss_like_output "preview -o json: 20,000 clusters each given a 2 KB value" --config-dump "$work/tiny.json" --datacenter dc1 -o json
# and -o json's unmatched_resources: 20,000 clusters no patch matches were a tree until the end
# (38 MB against the text report's 12 MB); written as met now, like the changed ones
if [ -x /usr/bin/time ] && [ "${PO_SANITIZED:-0}" != 1 ]; then
  /usr/bin/time -f '%M' -o "$work/time" "$bin" preview -f "$po" --config-dump "$work/tiny.json" --datacenter dc1 >/dev/null 2>&1
  ref=$(tail -1 "$work/time")
  /usr/bin/time -f '%M' -o "$work/time" "$bin" preview -f "$po" --config-dump "$work/tiny.json" --datacenter dc1 -o json >"$work/out" 2>&1
  rc=$? rss=$(tail -1 "$work/time")
  if [ $rc = 0 ] && [ "$rss" -le $((ref + 2048)) ] && jq -e '.unmatched_resources | length == 20000' "$work/out" >/dev/null; then
    pass=$((pass+1)); else echo "FAIL preview -o json, 20,000 unmatched clusters: exit $rc, peak RSS $rss KB against the text report's $ref KB"; fail=$((fail+1)); fi
fi

# 7. A link to / inside the manifests walked the whole file system (every *.yaml/*.json on the
#    machine read and reported; 113 s and 2.6 GB on the dev machine). A link to a directory is
#    not followed now (find without -L): listed as not read, at once.
mkdir "$work/walk" && cp "$work/cm/a.yaml" "$work/walk/" && ln -s / "$work/walk/root"
timeout 10 "$bin" validate --allow-empty -f "$work/walk" >"$work/out" 2>&1
rc=$?; [ $rc != 124 ] && pass=$((pass+1)) || { echo "FAIL validate -f DIR holding a link to /: still walking after 10 s"; fail=$((fail+1)); }
check "validate -f DIR holding a link to /" 0 $rc "$work/out" "$work/walk/root: not read: a symbolic link to a directory: not followed
0 valid, 0 invalid, 1 skipped; 1 entry not read"
finish
