#!/usr/bin/env bash
# Envoy's protoc-gen-validate rules on hand-written EnvoyFilter and EnvoyPatchPolicy values (issue
# 12), as data: `validate -f` of each testdata/native-rules/NAME.yaml byte for byte against
# NAME.out (exit 1: each file holds at least one violation, beside values that must pass).
# PO_UPDATE_GOLDEN=1 rewrites the golden files (review the diff).
source "$(dirname "$0")/lib.sh"
for f in "$data"/native-rules/*.yaml; do
  "$bin" validate -f "$f" >"$work/out" 2>&1
  rc=$?
  golden "$(basename "$f")" 1 "$rc" "$work/out" "${f%.yaml}.out"
done
finish
