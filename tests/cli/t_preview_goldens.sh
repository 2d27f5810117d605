#!/usr/bin/env bash
# preview on Consul's own xDS goldens for builtin/property-override (issue 25): each case of
# testdata/preview/goldens/cases is one of Consul's TestEnvoyExtenderWithSnapshot cases, its
# PropertyOverride the case's patches, its dump the resources of the case's snapshot without the
# extension; preview must change exactly the resources Consul's golden shows patched. The
# splitter case is the one that needs every discovery-chain target's SNI in the upstream's set
# (a subset's, another datacenter's).
#   t_preview_goldens.sh BIN
set -u
. "$(dirname "$0")/lib.sh"
g=$data/preview/goldens
cases=0
while IFS= read -r line; do
  case "$line" in '#'*|'') continue ;; '  '*) printf '%s\n' "${line#  }" >>"$work/want.$cur"; continue ;; esac
  read -r cur dump <<<"$line"
  printf '%s %s\n' "$cur" "$dump" >>"$work/list"
  : >"$work/want.$cur"
done <"$g/cases"
while read -r name dump; do
  cases=$((cases+1))
  "$bin" preview -f "$g/$name.yaml" --config-dump "$g/dump-$dump.json" >"$work/out" 2>"$work/err"
  rc=$?
  # a changed resource's header: "<type> <name> (<direction>...): <patches>" at column 0
  grep -E '^(cluster|cluster-load-assignment|listener|route) [^ ]+ \(' "$work/out" | sed -E 's/ \(.*//' | sort >"$work/got"
  sort "$work/want.$name" >"$work/want"
  if [ $rc != 0 ]; then
    echo "FAIL golden $name: exit $rc"; cat "$work/err"; fail=$((fail+1))
  elif ! cmp -s "$work/got" "$work/want"; then
    echo "FAIL golden $name: changed resources differ from Consul's golden (< Consul, > preview):"
    diff "$work/want" "$work/got"; fail=$((fail+1))
  else
    pass=$((pass+1))
  fi
done <"$work/list"
[ "$cases" -ge 13 ] || { echo "FAIL: $cases golden cases read, want 13"; fail=$((fail+1)); }
echo "$pass passed, $fail failed ($cases of Consul's golden cases)"
[ "$fail" = 0 ]
