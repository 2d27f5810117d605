#!/usr/bin/env bash
# ADV-KNOWN-FAILING (registered DISABLED in CMakeLists.txt): EnvoyPatchPolicy paths the checker
# reads unlike Envoy Gateway does. testdata/native-known/: a JSON-name path segment accepted
# without a word (EG fails it), a digits key under a Struct taken for a list index (refused,
# EG applies it).
source "$(dirname "$0")/lib.sh"
k=$data/native-known
"$bin" validate -f "$k/epp-json-name-path.yaml" >"$work/out" 2>&1
contains "a JSON name in a path is reported, naming the proto field" "$work/out" "connect_timeout"
"$bin" validate -f "$k/epp-numeric-struct-key.yaml" >"$work/out" 2>&1
check "digits under a Struct are a key: admitted" 0 $? "$work/out"
finish
