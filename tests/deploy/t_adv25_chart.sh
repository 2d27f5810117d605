#!/usr/bin/env bash
# adv-25: the chart as an umbrella chart's dependency under release names Helm accepts
# (chartutil's release-name rule: DNS labels joined by dots, consecutive dashes allowed, at most
# 53 characters). Every object the chart renders must carry a name the API server takes for its
# kind (a Service's a DNS-1035 label; the others DNS-1123 subdomains, and a webhook
# configuration's too), or the render must fail saying which release name it cannot use.
#   t_adv25_chart.sh BUILD_DIR
source "$(dirname "$0")/lib.sh"
printf 'propertyoverride:\n  nameOverride: po\n' >"$work/umbrella.yaml"
label='^[a-z]([-a-z0-9]*[a-z0-9])?$'
subdomain='^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'
check_names() { # CASE FILE.json
  jq -r --arg l "$label" --arg s "$subdomain" '.[] | select(.metadata.name != null) |
      select((.kind == "Service" and ((.metadata.name | test($l)) | not) or (.metadata.name | length) > 63)
          or ((.metadata.name | test($s)) | not)) | "\(.kind) \(.metadata.name)"' "$2" >"$work/badnames"
  if [ -s "$work/badnames" ]; then fail "$1: names the API server refuses: $(tr '\n' ';' <"$work/badnames")"
  else ok "$1: every object name is valid for its kind"; fi
}
try() { # CASE RELEASE
  if "$H" --chart "$chart" --as-subchart --name "$2" --namespace po -f "$work/umbrella.yaml" >"$work/$1.yaml" 2>"$work/err"; then
    "$H" yaml2json "$work/$1.yaml" >"$work/$1.json"
    check_names "$1 (release $2)" "$work/$1.json"
  elif grep -qF -- "$2" "$work/err"; then ok "$1: refused, naming the release: $(head -1 "$work/err")"
  else fail "$1: refused without naming the release: $(cat "$work/err")"; fi
}
try plain platform
# a dotted release name: the Services (webhook, metrics) would be named team.a-po-...
try dotted team.a
# 40 characters cut at a dash pair: the name ends in '-' after trunc 40 | trimSuffix "-"
try dashes "$(printf 'a%.0s' {1..38})--b"
finish
