#!/usr/bin/env bash
# Hostile files given to the one-shot commands (issue 21, item 5): every command that reads a
# file goes through one reader (controller/cli/io.c), which opens without blocking and refuses
# what is not a regular file, refuses a file over the limit from its size, and bounds stdin;
# the directory walk says every entry it does not read, and no file read at all is exit 2.
# Each run has `timeout 10`: a FIFO once blocked validate, render and preview forever (exit 124
# here), a 1.1 GB file was read whole (1.05 GB RSS, 4.5-7.5 s) before "larger than 1024 MiB", and
# a directory of a FIFO or of links to devices gave "0 valid, 0 invalid, 0 skipped", exit 0.
#   t_hostile_files.sh BIN
. "$(dirname "$0")/lib.sh"
pv=$data/preview
po=$pv/consul-po.yaml

# run NAME WANT_RC ARGS...: the command under timeout 10 (124: it hung), its output in $work/out.
run() {
  local name=$1 want=$2; shift 2
  timeout 10 "$bin" "$@" >"$work/out" 2>&1 </dev/null
  check "$name" "$want" $? "$work/out"
}

mkfifo "$work/fifo.yaml"
fifo_msg="$work/fifo.yaml: a FIFO (named pipe), not a regular file: refused (reading it could block or never end; a pipe can be given as stdin, -)"
run "validate -f FIFO" 2 validate -f "$work/fifo.yaml"
contains "validate -f FIFO names it" "$work/out" "$work/fifo.yaml: error: a FIFO (named pipe), not a regular file: refused"
run "render -f FIFO" 2 render -f "$work/fifo.yaml"
contains "render -f FIFO names it" "$work/out" "$work/fifo.yaml: error: a FIFO (named pipe), not a regular file: refused"
run "preview -f FIFO" 2 preview -f "$work/fifo.yaml" --config-dump "$pv/consul-dump.json"
contains "preview -f FIFO names it" "$work/out" "$work/fifo.yaml: error: a FIFO (named pipe), not a regular file: refused"
run "preview --config-dump FIFO" 2 preview -f "$po" --config-dump "$work/fifo.yaml"
contains "preview --config-dump FIFO names it" "$work/out" "propertyoverride preview: $fifo_msg"
run "patch --input FIFO" 2 patch --message envoy.config.cluster.v3.Cluster --input "$work/fifo.yaml" --patches "$work/fifo.yaml"
contains "patch --input FIFO names it" "$work/out" "propertyoverride patch: $fifo_msg"
run "validate --consul-arguments FIFO" 2 validate --consul-arguments "$work/fifo.yaml"
contains "validate --consul-arguments FIFO names it" "$work/out" "propertyoverride validate: $fifo_msg"
# a device named directly: /dev/zero never ends
run "validate -f /dev/zero" 2 validate -f /dev/zero
contains "validate -f /dev/zero says what it is" "$work/out" "/dev/zero: error: a character device, not a regular file: refused"

# A FIFO through stdin stays allowed (the shell's open is what waits for the writer), read up to
# the limit.
{ cat "$data/tree/a.yaml" >"$work/fifo.yaml" & } 2>/dev/null
timeout 10 "$bin" validate -f - <"$work/fifo.yaml" >"$work/out" 2>&1
check "validate -f - from a FIFO" 0 $? "$work/out" "${api_consul}
1 valid, 0 invalid, 0 skipped"
wait
# stdin past the limit (render's 64 MiB): refused once the limit is read, saying so
timeout 10 "$bin" render -f - </dev/zero >"$work/out" 2>&1
check "render -f - past the limit" 2 $?
contains "render -f - past the limit says so" "$work/out" "-: error: stdin is larger than 64 MiB: refused (read up to the limit, no further)"

# A sparse file over the limit is refused from its size, never read: fast and small.
truncate -s 1100M "$work/big.yaml"
truncate -s 300M "$work/big.json"
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f '%M %e' -o "$work/time" timeout 10 "$bin" validate -f "$work/big.yaml" >"$work/out" 2>&1
  check "validate 1.1 GB file" 2 $? "$work/out"
  contains "validate 1.1 GB file refused from its size" "$work/out" "big.yaml: error: 1153433600 bytes, larger than 1024 MiB: refused without reading it"
  read -r rss secs < <(tail -1 "$work/time")
  # peak RSS means nothing under ASan (shadow memory): PO_SANITIZED=1 there
  if [ "${PO_SANITIZED:-0}" = 1 ] || [ "${rss:-999999}" -lt 50000 ]; then pass=$((pass+1)); else echo "FAIL validate 1.1 GB file: peak RSS $rss KB (bound 50000: it was read)"; fail=$((fail+1)); fi
  if awk -v s="${secs:-99}" 'BEGIN { exit !(s < 2) }'; then pass=$((pass+1)); else echo "FAIL validate 1.1 GB file: $secs s (bound 2 s: it was read)"; fail=$((fail+1)); fi
  /usr/bin/time -f '%M %e' -o "$work/time" timeout 10 "$bin" preview -f "$po" --config-dump "$work/big.json" >"$work/out" 2>&1
  check "preview 300 MB dump" 2 $? "$work/out"
  contains "preview 300 MB dump refused from its size" "$work/out" "big.json: 314572800 bytes, larger than 256 MiB: refused without reading it"
  read -r rss secs < <(tail -1 "$work/time")
  if [ "${PO_SANITIZED:-0}" = 1 ] || [ "${rss:-999999}" -lt 50000 ]; then pass=$((pass+1)); else echo "FAIL preview 300 MB dump: peak RSS $rss KB (bound 50000: it was read)"; fail=$((fail+1)); fi
fi
rm -f "$work/big.yaml" "$work/big.json"

# Directories: every entry not read is said, with why; none read at all is exit 2.
mkdir -p "$work/onlyfifo" "$work/devices" "$work/empty" "$work/mixed/sub"
mkfifo "$work/onlyfifo/x.yaml"
run "directory of a FIFO" 2 validate -f "$work/onlyfifo"
check "directory of a FIFO: what it says" 2 2 "$work/out" "$work/onlyfifo/x.yaml: not read: a FIFO (named pipe), not a regular file
0 valid, 0 invalid, 0 skipped; 1 entry not read
nothing validated: no file was read (every entry of the inputs is listed above as not read)"
ln -s /dev/zero "$work/devices/zero.yaml"
ln -s /dev/null "$work/devices/null.json"
ln -s "$work/nowhere.yaml" "$work/devices/dangling.yaml"
printf 'notes\n' >"$work/devices/README.md"
run "directory of device links" 2 validate -f "$work/devices"
check "directory of device links: what it says" 2 2 "$work/out" "$work/devices/README.md: not read: not named *.yaml, *.yml or *.json
$work/devices/dangling.yaml: not read: a dangling symbolic link
$work/devices/null.json: not read: a character device, not a regular file
$work/devices/zero.yaml: not read: a character device, not a regular file
0 valid, 0 invalid, 0 skipped; 4 entries not read
nothing validated: no file was read (every entry of the inputs is listed above as not read)"
timeout 10 "$bin" validate -f "$work/devices" -o json >"$work/out" 2>&1
check "directory of device links, json" 2 $?
jqcheck "directory of device links, json counts" "$work/out" '.summary.files_read == 0 and .summary.not_read == 4 and (.not_read | map(.reason) | index("a character device, not a regular file") != null)'
run "render of device links" 2 render -f "$work/devices"
contains "render of device links: nothing validated" "$work/out" "nothing validated: no file was read"
run "empty directory" 2 validate -f "$work/empty"
check "empty directory: what it says" 2 2 "$work/out" "0 valid, 0 invalid, 0 skipped
nothing validated: no file was read (the directories given are empty)"
# one real file beside them: it is validated, the others said, exit 0
cp "$data/tree/a.yaml" "$work/mixed/sub/"
mkfifo "$work/mixed/pipe.yml"
ln -s /dev/zero "$work/mixed/zero.json"
run "a manifest among hostile entries" 0 validate -f "$work/mixed"
check "a manifest among hostile entries: what it says" 0 0 "$work/out" "$work/mixed/pipe.yml: not read: a FIFO (named pipe), not a regular file
$work/mixed/zero.json: not read: a character device, not a regular file
${api_consul}
1 valid, 0 invalid, 0 skipped; 2 entries not read"
timeout 10 "$bin" validate -f "$work/mixed" -o github >"$work/out" 2>&1
contains "github: a notice per entry not read" "$work/out" "::notice file=$work/mixed/pipe.yml,title=not read::a FIFO (named pipe), not a regular file"

# preview's memory: a 46 MB dump (testdata's Consul dump with 71,500 more upstream clusters,
# copies of its api cluster under distinct names) once took 406 MB (8.8x; other shapes up to
# 37x: upb's tree of the whole dump, every nested Any at every level). The dump is now read a
# piece at a time, each resource kept as its bytes and decoded when a patch matches it, in an
# arena freed after it: peak RSS within 4x the input, one patch or every cluster patched.
if [ -x /usr/bin/time ] && [ "${PO_SANITIZED:-0}" != 1 ]; then
  entry=$(jq -c '.configs[1].dynamic_active_clusters[1]' "$pv/consul-dump.json")
  name=$(jq -r '.configs[1].dynamic_active_clusters[1].cluster.name' "$pv/consul-dump.json")
  jq -c '.configs[1].dynamic_active_clusters += ["@@MORE@@"]' "$pv/consul-dump.json" |
    awk -v n=71500 -v entry="$entry" -v name="$name" '{
      i = index($0, "\"@@MORE@@\""); printf "%s", substr($0, 1, i - 1)
      np = 0; e = entry
      while ((j = index(e, name)) > 0) { part[np++] = substr(e, 1, j - 1); e = substr(e, j + length(name)) }
      part[np] = e; rest = substr(name, index(name, "."))
      for (k = 0; k < n; k++) {
        nm = sprintf("svc-%06d%s", k, rest); line = (k ? "," : "") part[0]
        for (p = 1; p <= np; p++) line = line nm part[p]
        printf "%s", line
      }
      printf "%s\n", substr($0, i + 10) }' >"$work/d46.json"
  size=$(wc -c <"$work/d46.json")
  printf '%s\n' 'apiVersion: propertyoverride.io/v1alpha1' 'kind: PropertyOverride' 'metadata: {name: every}' 'spec:' \
    '  targetRef: {kind: ServiceDefaults, name: web}' '  patches:' \
    '    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}' \
    '      op: add' '      path: /outlier_detection/max_ejection_percent' '      value: 50' >"$work/every.yaml"
  for po_file in "$po" "$work/every.yaml"; do
    label="preview of a $((size / 1000000)) MB dump, $(basename "$po_file")"
    /usr/bin/time -f '%M %e' -o "$work/time" timeout 60 "$bin" preview -f "$po_file" --config-dump "$work/d46.json" --datacenter dc1 >"$work/out" 2>"$work/err"
    check "$label" 0 $? "$work/err"
    head -1 "$work/out" >"$work/first"
    contains "$label: every resource read" "$work/first" "preview: mesh consul (detected from the dump: its bootstrap's stats tag consul.source.service web; --mesh names another), local datacenter dc1; 71513 active resources: "
    read -r rss secs < <(tail -1 "$work/time")
    bound=$((size * 4 / 1024))
    if [ "${rss:-999999999}" -le "$bound" ]; then pass=$((pass+1)); else echo "FAIL $label: peak RSS $rss KB, over 4x the dump ($bound KB)"; fail=$((fail+1)); fi
    echo "$label: peak RSS $rss KB ($(awk -v r="$rss" -v s="$size" 'BEGIN { printf "%.2f", r * 1024 / s }')x), $secs s"
  done
  # the worst shape for what is kept per resource: 450,000 clusters of a name alone (42 MB; it
  # took 22x, 1.2 GB for 56 MB)
  awk 'BEGIN { printf "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\",\"dynamic_active_clusters\":[";
    for (i = 0; i < 450000; i++) printf "%s{\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"c%d\"}}", (i ? "," : ""), i;
    printf "]}]}\n" }' >"$work/min.json"
  size=$(wc -c <"$work/min.json")
  label="preview of $((size / 1000000)) MB of minimal clusters"
  /usr/bin/time -f '%M %e' -o "$work/time" timeout 60 "$bin" preview -f "$po" --config-dump "$work/min.json" --datacenter dc1 >"$work/out" 2>"$work/err"
  check "$label" 0 $? "$work/err"
  head -1 "$work/out" >"$work/first"
  contains "$label: every resource read" "$work/first" "450000 active resources"
  read -r rss secs < <(tail -1 "$work/time")
  bound=$((size * 4 / 1024))
  if [ "${rss:-999999999}" -le "$bound" ]; then pass=$((pass+1)); else echo "FAIL $label: peak RSS $rss KB, over 4x the dump ($bound KB)"; fail=$((fail+1)); fi
  echo "$label: peak RSS $rss KB ($(awk -v r="$rss" -v s="$size" 'BEGIN { printf "%.2f", r * 1024 / s }')x), $secs s"
fi
finish
