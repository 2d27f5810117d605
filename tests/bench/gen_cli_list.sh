#!/usr/bin/env bash
# gen_cli_list.sh N [invalid-every] [yaml|json]: a `kind: List` of N PropertyOverrides on stdout,
# for bench_cli.sh and tests/cli. YAML (default): block style, about 455 bytes each (200,000 make
# 91 MB); json: one compact object per line, about 370 bytes each (200,000 make 74 MB). Every
# INVALID-EVERY-th one (default 0: none) sets an unknown field, so the report has findings to
# print; item i (0-based) starts on line 3 + 17*i in YAML, line 2 + i in JSON. Generated, never
# committed.
set -euo pipefail
n=${1:?usage: gen_cli_list.sh N [invalid-every] [yaml|json]} bad=${2:-0} format=${3:-yaml}
case $format in yaml | json) ;; *) echo "gen_cli_list.sh: format must be yaml or json" >&2; exit 2 ;; esac
awk -v n="$n" -v bad="$bad" -v format="$format" 'BEGIN {
  if (format == "json") {
    print "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
    for (i = 0; i < n; i++) {
      path = (bad > 0 && i % bad == bad - 1) ? "/no_such_field" : "/circuit_breakers"
      printf "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
      printf "\"metadata\":{\"name\":\"frontend-reports-%07d\",\"namespace\":\"team-%d\"},", i, i % 50
      printf "\"spec\":{\"targetRef\":{\"kind\":\"ServiceDefaults\",\"name\":\"frontend-%d\"},", i
      printf "\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\","
      printf "\"services\":[{\"name\":\"reports\"}]},\"op\":\"remove\",\"path\":\"%s\"}]}}%s\n", path, i < n - 1 ? "," : ""
    }
    print "]}"
    exit
  }
  print "apiVersion: v1"; print "kind: List"; print "items:"
  for (i = 0; i < n; i++) {
    path = (bad > 0 && i % bad == bad - 1) ? "/no_such_field" : "/circuit_breakers"
    printf "  - apiVersion: propertyoverride.io/v1alpha1\n    kind: PropertyOverride\n"
    printf "    metadata:\n      name: frontend-reports-%07d\n      namespace: team-%d\n", i, i % 50
    printf "    spec:\n      targetRef:\n        kind: ServiceDefaults\n        name: frontend-%d\n", i
    printf "      patches:\n        - resourceFilter:\n            resourceType: cluster\n"
    printf "            trafficDirection: outbound\n            services:\n              - name: reports\n"
    printf "          op: remove\n          path: %s\n", path
  }
}'
