#!/usr/bin/env bash
# validate -f of big Lists (issue 10): objects are checked as they are read, so a List larger
# than whole-tree readers accept (64 MiB) is read, its 150,000th item located exactly, and the
# reader's memory is the same for 1,000 items as for 150,001 (PO_DEBUG_STREAM_STATS: the peak of
# its arenas, deterministic); peak RSS within 3x the input when GNU time is installed (not in
# sanitizer builds: PO_SANITIZED=1, set by CMakeLists.txt). YAML
# and JSON (tests/bench/gen_cli_list.sh writes both).
. tests/cli/lib.sh
gen=tests/bench/gen_cli_list.sh

peak() { sed -n 's/^stream: objects \([0-9]*\) retracted \([0-9]*\) peak_bytes \([0-9]*\)$/\1 \2 \3/p' "$1"; }

for format in yaml json; do
  # Only item 150,000 (0-based) is invalid.
  "$gen" 150001 150001 "$format" >"$work/big.$format"
  "$gen" 1000 0 "$format" >"$work/small.$format"
  size=$(stat -c %s "$work/big.$format")
  if [ "$format" = yaml ]; then # beyond what po_Cli_ReadFile takes (JSON: 56 MB)
    [ "$size" -gt $((64 << 20)) ] && pass=$((pass+1)) || { echo "FAIL $format: the big List is only $size bytes"; fail=$((fail+1)); }
  fi

  PO_DEBUG_STREAM_STATS=1 "$bin" validate -f "$work/big.$format" >"$work/out" 2>"$work/err"
  check "$format big list" 1 $?
  if [ "$format" = yaml ]; then
    # item i starts on line 4 + 17i; its patch 10 lines further, at column 11
    contains "$format item 150000 located" "$work/out" \
      "$work/big.yaml:2550014:11: error: document 1 items[150000]: PropertyOverride team-0/frontend-reports-0150000: Patches[0] /no_such_field: invalid Patches[0]: no match for field 'no_such_field'!"
  else
    contains "$format item 150000 located" "$work/out" \
      "$work/big.json: error: document 1 items[150000]: PropertyOverride team-0/frontend-reports-0150000: Patches[0] /no_such_field: invalid Patches[0]: no match for field 'no_such_field'!"
  fi
  contains "$format summary" "$work/out" "150000 valid, 1 invalid, 0 skipped"
  [ "$(grep -c . "$work/out")" = 3 ] && pass=$((pass+1)) || { echo "FAIL $format: one finding expected"; cat "$work/out"; fail=$((fail+1)); }
  read -r objects retracted big_peak < <(peak "$work/err")
  check "$format objects streamed" 150001 "${objects:-none}"
  check "$format nothing retracted" 0 "${retracted:-none}"

  PO_DEBUG_STREAM_STATS=1 "$bin" validate -f "$work/small.$format" >"$work/out" 2>"$work/err"
  check "$format small list" 0 $?
  read -r objects retracted small_peak < <(peak "$work/err")
  check "$format reader memory bounded by one item" "${small_peak:-none}" "${big_peak:-none}"

  if [ -x /usr/bin/time ] && [ "${PO_SANITIZED:-0}" != 1 ]; then
    /usr/bin/time -f '%M' -o "$work/rss" "$bin" validate -f "$work/big.$format" >/dev/null 2>&1
    kb=$(tail -1 "$work/rss")
    if [ "$kb" -le $((size * 3 / 1024)) ]; then pass=$((pass+1)); else echo "FAIL $format: peak RSS $kb KB for $size bytes"; fail=$((fail+1)); fi
  fi
  rm -f "$work/big.$format"
done

# A List whose items are read before its kind (kubectl get -o yaml sorts the keys): streamed too. (--allow-empty: only other kinds, nothing validated)
printf 'apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n- apiVersion: v1\n  kind: Secret\nkind: List\nmetadata:\n  resourceVersion: ""\n' >"$work/sorted.yaml"
PO_DEBUG_STREAM_STATS=1 "$bin" validate --allow-empty -f "$work/sorted.yaml" >"$work/out" 2>"$work/err"
check "kind after items" 0 $? "$work/out" "0 valid, 0 invalid, 2 skipped"
contains "kind after items streamed" "$work/err" "stream: objects 2 retracted 0 "
# Not a List after all: the document is handed over again, and counted once.
printf 'apiVersion: v1\nkind: Thing\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n' >"$work/thing.yaml"
PO_DEBUG_STREAM_STATS=1 "$bin" validate --allow-empty -f "$work/thing.yaml" >"$work/out" 2>"$work/err"
check "not a list" 0 $? "$work/out" "0 valid, 0 invalid, 1 skipped"
contains "not a list retracted" "$work/err" "retracted 1 "
# A file unparsable after some valid objects: only its error, as when it was read whole.
{ "$gen" 3 2; printf 'oops: [\n'; } >"$work/broken.yaml"
"$bin" validate -f "$work/broken.yaml" >"$work/out" 2>&1
check "broken after objects" 2 $?
contains "broken: no findings of its objects" "$work/out" "0 valid, 0 invalid, 0 skipped, 1 unreadable"
finish
