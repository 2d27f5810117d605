#!/usr/bin/env bash
# gen_cli_list.sh N [invalid-every]: a YAML `kind: List` of N PropertyOverrides on stdout (about
# 295 bytes each: 200,000 make 59 MB), for bench_cli.sh. Every INVALID-EVERY-th one (default
# 0: none) sets an unknown field, so the report has findings to print. Generated, never committed.
set -euo pipefail
n=${1:?usage: gen_cli_list.sh N [invalid-every]} bad=${2:-0}
awk -v n="$n" -v bad="$bad" 'BEGIN {
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
