#!/usr/bin/env bash
# ADV finding 6: the chart derives --webhook-memory-budget (3/8 of resources.limits.memory) only
# from an integer "Gi" or "Mi" limit; any other Kubernetes quantity ("128M", "134217728" bytes,
# "150000Ki", "0.5Gi") renders no flag, so the binary's default of 96 MiB applies whatever the
# limit: 96 MiB under a 128M (122 MiB) limit is 79% of it, beside the controller's steady state.
#   f6_chart_budget.sh [BUILD_DIR]   Exit 1 when a render's budget is over 3/8 of its limit.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
H=$build/tests/deploy/helmrender
"$top/tests/deploy/build-helmrender.sh" "$H" || exit 2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
for m in 256Mi 1Gi 128Mi 128M 134217728 150000Ki 200M 0.5Gi 1536Mi 1.5Gi; do
  printf 'resources:\n  limits:\n    memory: "%s"\n' "$m" >"$work/v.yaml"
  b=$("$H" --chart "$top/helm/propertyoverride" -f "$work/v.yaml" | sed -n 's/.*--webhook-memory-budget=\([0-9]*\).*/\1/p')
  b=${b:-96}
  lim=$(/usr/bin/python3 -c "
import re,sys; q=sys.argv[1]; m=re.fullmatch(r'([0-9.]+)([A-Za-z]*)',q)
u={'':1,'k':1e3,'M':1e6,'G':1e9,'Ki':1024,'Mi':1024**2,'Gi':1024**3}[m.group(2)]
print(int(float(m.group(1))*u))" "$m")
  verdict=ok
  if awk -v b="$b" -v l="$lim" 'BEGIN{exit !(b*1048576 > l*3/8+1048576)}'; then verdict=OVER; bad=1; fi
  printf '%-11s limit %6.1f MiB -> budget %3s MiB (%3.0f%% of the limit) %s\n' "$m" "$(echo "$lim/1048576" | bc -l)" "$b" "$(echo "$b*1048576*100/$lim" | bc -l)" "$verdict"
done
exit $bad
