#!/usr/bin/env bash
# propertyoverride controller refuses each bad flag before it starts anything, exit 2 and the
# words of testdata/controller-flags.tsv (one case a line: the flags, a tab, the first line it
# says). The refusals are data so a change of the flag parsing (cmd_controller.c) shows as a
# changed line, not as a start against no API server.
#   t_controller_flags.sh PROPERTYOVERRIDE
source "$(dirname "$0")/lib.sh"
n=0
while IFS=$'\t' read -r flags want; do
  case "$flags" in '#'* | '') continue ;; esac
  n=$((n + 1))
  # shellcheck disable=SC2086 # the flags are words
  env -u KUBECONFIG HOME="$work" "$bin" controller $flags >"$work/out" 2>&1
  rc=$?
  head -n 1 "$work/out" >"$work/first"
  check "controller $flags" 2 "$rc" "$work/first" "propertyoverride controller: $want"
done <"$data/controller-flags.tsv"
[ "$n" -ge 30 ] || { echo "FAIL: only $n cases read from $data/controller-flags.tsv"; fail=$((fail + 1)); }
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
