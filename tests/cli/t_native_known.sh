#!/usr/bin/env bash
# EnvoyPatchPolicy paths read as Envoy Gateway reads them (testdata/native-known/; issue 25's
# two, once known failures): a JSON-name segment (connectTimeout) is not in the resource Envoy
# Gateway writes with proto field names (a replace there fails: an error naming the proto field;
# an add is a warning), and a digits segment directly under a Struct is a key there, not a list
# index (admitted, as Envoy Gateway applies it).
source "$(dirname "$0")/lib.sh"
k=$data/native-known
"$bin" validate -f "$k/epp-json-name-path.yaml" >"$work/out" 2>&1
check "a JSON name in a replace's path is refused" 1 $? "$work/out"
contains "a JSON name in a path is reported, naming the proto field" "$work/out" "'connectTimeout' is the JSON name of envoy.config.cluster.v3.Cluster's field 'connect_timeout'"
sed 's/op: replace/op: add/' "$k/epp-json-name-path.yaml" >"$work/add.yaml"
"$bin" validate -f "$work/add.yaml" >"$work/out" 2>&1
check "a JSON name in an add's path is a warning" 0 $? "$work/out"
contains "the add's warning says when it fails" "$work/out" "where the generated resource has the field set, the patched resource holds both names"
"$bin" validate -f "$k/epp-numeric-struct-key.yaml" >"$work/out" 2>&1
check "digits under a Struct are a key: admitted" 0 $? "$work/out"
# Deeper than the Struct itself the schema does not say (a Value: an object or a list), so digits
# there are read as RFC 6901 does, a list index: the value is checked inside a list.
sed 's#example.com/2024#example.com/a/0#; s#value: {rollout: true}#value: true#' "$k/epp-numeric-struct-key.yaml" >"$work/deeper.yaml"
"$bin" validate -f "$work/deeper.yaml" >"$work/out" 2>&1
check "digits under a Struct's Value: an index, admitted" 0 $? "$work/out"
finish
