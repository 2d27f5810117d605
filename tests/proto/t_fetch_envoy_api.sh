#!/usr/bin/env bash
# scripts/fetch-envoy-api.sh against its pinned hashes: a module whose hash differs from the pin,
# or that has none, stops it with a message naming the module; with the real pins it lists each
# module folder of the snapshot (the envoy module and, at the versions its go.mod requires, the
# modules it imports), and a second run does nothing. One snapshot (v1.32.4) keeps it short.
# Needs Go and the Go module proxy (or a module cache that holds the modules).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass+1)); }
bad() { echo "FAIL $1"; [ -f "$work/err" ] && cat "$work/err"; fail=$((fail+1)); }

grep '^v1.32.4	' "$top/proto/snapshots.tsv" >"$work/snapshots.tsv"
run() { PO_DEPS_DIR="$work/deps-$1" PO_ENVOY_SNAPSHOTS="$work/snapshots.tsv" PO_ENVOY_PINS="$2" \
          "$top/scripts/fetch-envoy-api.sh" 2>"$work/err"; }

# another hash for the envoy module itself
sed 's|^\(github.com/envoyproxy/go-control-plane/envoy	v1.32.4	\).*|\1h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=|' \
  "$top/proto/envoy-modules.tsv" >"$work/wrong.tsv"
if run wrong "$work/wrong.tsv"; then bad "a wrong pin is refused"
elif grep -q "github.com/envoyproxy/go-control-plane/envoy v1.32.4: hash h1:.*, but .*wrong.tsv pins h1:AAAA" "$work/err" &&
     [ ! -e "$work/deps-wrong/envoy-go/v1.32.4.dirs" ]; then ok "a wrong pin is refused, naming the module"
else bad "a wrong pin is refused, naming the module"; fi

# no pin for a module the envoy module's go.mod requires
grep -v '^cel.dev/expr	v0.19.0	' "$top/proto/envoy-modules.tsv" >"$work/missing.tsv"
if run missing "$work/missing.tsv"; then bad "a module without a pin is refused"
elif grep -q "cel.dev/expr v0.19.0 has no pinned hash in .*missing.tsv (go says h1:" "$work/err"; then
  ok "a module without a pin is refused, naming it"
else bad "a module without a pin is refused, naming it"; fi

all_dirs() { local d; while read -r d; do [ -d "$d" ] || return 1; done <"$1"; }

# the real pins
if run real "$top/proto/envoy-modules.tsv"; then
  dirs="$work/deps-real/envoy-go/v1.32.4.dirs"
  if [ "$(wc -l <"$dirs")" -eq 9 ] && grep -q '/github.com/envoyproxy/go-control-plane/envoy@v1.32.4$' "$dirs" &&
     grep -q '/github.com/cncf/xds/go@v0.0.0-20240905190251-b4127c9b8d78$' "$dirs" &&
     grep -q '/google.golang.org/protobuf@v1.36.4/types$' "$dirs" &&
     ! grep -qv '^/' "$dirs" && all_dirs "$dirs"; then
    ok "the real pins: the nine module folders of v1.32.4, at its go.mod's versions"
  else bad "the real pins: the nine module folders of v1.32.4"; cat "$dirs"; fi
  before=$(stat -c %Y "$dirs")
  if run real "$top/proto/envoy-modules.tsv" && [ "$(stat -c %Y "$dirs")" = "$before" ] && [ ! -s "$work/err" ]; then
    ok "a second run does nothing"
  else bad "a second run does nothing"; fi
else bad "the real pins"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
