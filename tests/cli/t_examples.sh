#!/usr/bin/env bash
# validate -f on examples/: every valid/, overlap/, consul/ and envoy-gateway/ file validates
# (envoy-gateway/'s Gateways and HTTPRoutes are skipped: they are there for render); every invalid/ file
# refused by the webhook fails with each of its webhook-message (and webhook-rule,
# webhook-suggests) texts; schema-only ones are at least answered (exit 0 or 1, no crash).
. tests/cli/lib.sh

# header FILE KEY: the values of `# KEY: text` lines (continuation lines, `#   more`, joined
# with one space), one per line.
header() {
  awk -v want="$2" '
    function trim(x) { gsub(/^[ \t\r]+|[ \t\r]+$/, "", x); return x }
    !/^#/ { exit }
    /^#   / && cur { vals[n] = vals[n] " " trim(substr($0, 5)); next }
    { cur = 0; s = trim(substr($0, 2)); i = index(s, ": ")
      if (i && substr(s, 1, i - 1) == want) { vals[++n] = trim(substr(s, i + 2)); cur = 1 } }
    END { for (k = 1; k <= n; k++) print vals[k] }' "$1"
}

for f in examples/valid/*.yaml examples/overlap/*.yaml examples/consul/*.yaml examples/envoy-gateway/*.yaml; do
  "$bin" validate -f "$f" >"$work/out" 2>&1
  check "valid $f" 0 $? "$work/out"
done
# Istio examples with the flags render takes for them (`# render-args:`, e.g. --istio-version). The
# whole tree below is checked without them: the list example is then judged as the newest Istio
# listed and accepted, with a warning that the release was assumed.
for f in examples/istio/*.yaml; do
  # shellcheck disable=SC2046
  "$bin" validate -f "$f" $(sed -n 's/^# render-args: //p' "$f") >"$work/out" 2>&1
  check "valid $f" 0 $? "$work/out"
done
for f in examples/invalid/*.yaml; do
  by=$(header "$f" rejected-by)
  "$bin" validate -f "$f" --verbose >"$work/out" 2>&1
  rc=$?
  case "$by" in
    *webhook*)
      check "invalid $f" 1 $rc "$work/out"
      [ -n "$(header "$f" webhook-message)" ] && pass=$((pass+1)) || { echo "FAIL $f: no webhook-message header read"; fail=$((fail+1)); }
      while IFS= read -r m; do [ -n "$m" ] && contains "$f message" "$work/out" "$m"; done < <(header "$f" webhook-message)
      while IFS= read -r m; do [ -n "$m" ] && contains "$f rule" "$work/out" "$m"; done < <(header "$f" webhook-rule)
      while IFS= read -r m; do [ -n "$m" ] && contains "$f suggests" "$work/out" "$m"; done < <(header "$f" webhook-suggests)
      ;;
    *)
      if [ $rc -le 1 ]; then pass=$((pass+1)); else echo "FAIL schema-only $f: exit $rc"; cat "$work/out"; fail=$((fail+1)); fi ;;
  esac
done
# The whole tree at once: directories walked, every file counted.
"$bin" validate -f examples/valid -f examples/consul >"$work/out" 2>&1
check "examples valid+consul" 0 $? "$work/out" "${api_consul}
10 valid, 0 invalid, 0 skipped"
"$bin" validate -f examples/ >"$work/out" 2>&1
check "examples all" 1 $?
contains "examples all summary" "$work/out" "17 valid, 18 invalid, 7 skipped"
finish
