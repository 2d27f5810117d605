#!/usr/bin/env bash
# adv-23: hand-written EnvoyPatchPolicy entries (and EnvoyFilter configPatches, below) validate -f passes clean although Envoy Gateway
# v1.9.1's own code fails each on the resources it generates (testdata/envoypatchpolicy/
# adv23-eg-fails.yaml says why, entry by entry). Each entry must get a finding (an error where
# the failure is certain, a warning where it depends on the generated resource).
. "$(dirname "$0")/lib.sh"
"$bin" validate -f "$data/envoypatchpolicy/adv23-eg-fails.yaml" >"$work/out" 2>&1
for i in 0 1 2 3 4 5; do
  contains "entry $i has a finding" "$work/out" "spec.jsonPatches[$i]"
done
# The duplicate field fails whatever was generated: an error.
contains "duplicate field is an error" "$work/out" "error: document 1: EnvoyPatchPolicy default/adv23: Patches[0]"
# EnvoyFilter configPatches Istio's ValidateEnvoyFilter refuses (testdata/envoyfilter/
# adv23-istio-refuses.yaml): each an error, so the file is invalid.
"$bin" validate -f "$data/envoyfilter/adv23-istio-refuses.yaml" >"$work/ef" 2>&1
check "an EnvoyFilter Istio refuses is invalid" 1 $? "$work/ef"
for i in 0 1 2 3 4 5; do
  contains "configPatches[$i] has a finding" "$work/ef" "spec.configPatches[$i]"
done
finish
