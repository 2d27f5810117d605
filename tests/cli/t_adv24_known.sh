#!/usr/bin/env bash
# adv-24: defects found and left for their owners, as failing checks (not in CMake: each fails on
# today's code; run by hand: bash tests/cli/t_adv24_known.sh build/propertyoverride).
#   t_adv24_known.sh BIN
set -u
. "$(dirname "$0")/lib.sh"

# 4. explain --mesh istio@1.30 names no release in its hint ("the Envoy API used here"), where
# validate says "the Envoy API judging istio@1.30".
"$bin" explain cluster/queuing_policies --mesh istio@1.30 >"$work/out" 2>&1
contains "explain --mesh: the hint names the release" "$work/out" "the Envoy API judging istio@1.30"
finish
