#!/usr/bin/env bash
# adv1 (issue 12): validate -f of a hand-written EnvoyPatchPolicy nests the value along the
# path with every all-digit segment taken for an array index, so a map key that is all digits
# (/metadata/filter_metadata/0, valid: filter_metadata is a map<string, Struct>) is reported
# as an invalid value, where Envoy Gateway applies it.
. "$(dirname "$0")/lib.sh"
"$bin" validate -f "$data/envoypatchpolicy/map-key-digits.yaml" >"$work/out" 2>&1
check "an all-digit map key is a key" 0 $? "$work/out"
finish
