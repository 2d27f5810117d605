#!/usr/bin/env bash
# validate -f on examples/: every valid/, overlap/ and consul/ file validates; every invalid/ file
# refused by the webhook fails with each of its webhook-message (and webhook-rule,
# webhook-suggests) texts; schema-only ones are at least answered (exit 0 or 1, no crash).
. tests/cli/lib.sh

# header FILE KEY: the values of `# KEY: text` lines (continuations joined), one per line.
header() {
  python3 - "$1" "$2" <<'P'
import sys
vals, cur = [], None
for line in open(sys.argv[1]):
    if not line.startswith('#'):
        break
    if line.startswith('#   ') and cur is not None:
        vals[cur] += ' ' + line[4:].strip(); continue
    cur = None
    key, sep, text = line[1:].strip().partition(': ')
    if sep and key == sys.argv[2]:
        vals.append(text.strip()); cur = len(vals) - 1
print('\n'.join(vals))
P
}

for f in examples/valid/*.yaml examples/overlap/*.yaml examples/consul/*.yaml; do
  "$bin" validate -f "$f" >"$work/out" 2>&1
  check "valid $f" 0 $? "$work/out"
done
for f in examples/invalid/*.yaml; do
  by=$(header "$f" rejected-by)
  "$bin" validate -f "$f" --verbose >"$work/out" 2>&1
  rc=$?
  case "$by" in
    *webhook*)
      check "invalid $f" 1 $rc "$work/out"
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
check "examples valid+consul" 0 $? "$work/out" "10 valid, 0 invalid, 0 skipped"
"$bin" validate -f examples/ >"$work/out" 2>&1
check "examples all" 1 $?
contains "examples all summary" "$work/out" "12 valid, 17 invalid, 0 skipped"
finish
