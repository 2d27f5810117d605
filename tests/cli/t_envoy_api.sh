#!/usr/bin/env bash
# The Envoy API snapshot each entry point judges with (issue 24): validate -f (PropertyOverrides
# of each mesh, ServiceDefaults, EnvoyFilters), validate --consul-arguments, render, patch and
# explain under --mesh MESH[@RELEASE] and --envoy-api VERSION, the flags' errors, and version.
# Tests as data: testdata/envoy-api/cases, one case a line, each NAME.out its whole output
# (PO_UPDATE_GOLDEN=1 rewrites them: review the diff).
. tests/cli/lib.sh
D=$data/envoy-api
while read -r name rc args; do
  case "$name" in '' | '#'*) continue ;; esac
  # shellcheck disable=SC2086 # the arguments are words; $D is expanded in them
  eval "set -- $args"
  "$bin" "$@" >"$work/raw" 2>"$work/err"
  got=$?
  cat "$work/err" >>"$work/raw"
  sed "s|$D|D|g" "$work/raw" >"$work/out"
  golden "$name" "$rc" "$got" "$work/out" "$D/$name.out"
done <"$D/cases"
finish
