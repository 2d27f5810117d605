# The one-shot CLI's torture when memory runs out (t_cli_oom.sh, t_adv27_oom.sh): sourced after
# lib.sh, with $shim the failalloc library. Each run must give exactly what a normal run gives, or
# nothing on stdout, exit 2 and "out of memory" on stderr.
# torture LABEL STRIDE ARGS...: the reference run, the count, then every STRIDE-th allocation
# (from the first) failed in turn; OOM_FROM and OOM_TO (default 1 and the count) narrow it, and
# OOM_LAST=N to the last N (the report's, after the schema's loads and the dump's decode).
# OOM_SAME=json compares the outputs as JSON documents (jq -S): json-c's serializer drops the
# pretty-printer's indentation when its buffer cannot grow, and says nothing (the same document).
same_output() {
  if [ "${OOM_SAME:-bytes}" = json ]; then
    jq -S . "$1" >"$1.norm" 2>/dev/null && jq -S . "$2" >"$2.norm" 2>/dev/null && cmp -s "$1.norm" "$2.norm"
  else
    cmp -s "$1" "$2"
  fi
}
torture() {
  local label=$1 stride=$2 n total want_rc rc bad=0 runs=0; shift 2
  "$bin" "$@" >"$work/want" 2>"$work/want_err"
  want_rc=$?
  if [ $want_rc -gt 1 ]; then echo "FAIL $label: reference run exit $want_rc"; cat "$work/want_err"; fail=$((fail+1)); return; fi
  PO_COUNT_ALLOC="$work/count" LD_PRELOAD="$shim" "$bin" "$@" >"$work/out" 2>/dev/null
  rc=$?
  if [ $rc -ne $want_rc ] || ! cmp -s "$work/out" "$work/want"; then
    echo "FAIL $label: the counted run differs from the reference (exit $rc)"; fail=$((fail+1)); return
  fi
  total=$(cat "$work/count")
  local from=${OOM_FROM:-1} to=${OOM_TO:-$total}
  [ -n "${OOM_LAST:-}" ] && [ "$total" -gt "$OOM_LAST" ] && from=$((total - OOM_LAST + 1))
  [ "$to" -gt "$total" ] && to=$total
  for ((n = from; n <= to; n += stride)); do
    runs=$((runs+1))
    PO_FAIL_ALLOC_AT=$n LD_PRELOAD="$shim" timeout 60 "$bin" "$@" >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc -eq $want_rc ] && same_output "$work/out" "$work/want"; then pass=$((pass+1)); continue; fi
    if [ $rc -eq 2 ] && [ ! -s "$work/out" ] && grep -q "out of memory" "$work/err"; then pass=$((pass+1)); continue; fi
    fail=$((fail+1)); bad=$((bad+1))
    if [ $bad -le 10 ]; then
      echo "FAIL $label: allocation $n of $total: exit $rc (want $want_rc or 2; 124: hung; above 128: a signal)"
      head -3 "$work/err"; head -3 "$work/out"
    fi
  done
  echo "$label: allocations $from to $to of $total (every ${stride}th: $runs runs) failed in turn, $bad wrong"
}

