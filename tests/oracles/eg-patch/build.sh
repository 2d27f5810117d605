#!/usr/bin/env bash
# Builds eg-patch (scripts/build-oracles.sh runs it as `build.sh OUT_DIR`): Envoy Gateway
# v1.9.1's processJSONPatches, which is unexported. The go command downloads the module (its
# checksum verified against go.sum and the checksum database), the module directory is copied
# from the module cache to OUT_DIR/.src/gateway, and ONE file is added to the copy,
# pooracle/bridge.go (bridge.go.in here), which exports the function; nothing else of Envoy
# Gateway is changed. main.go, go.mod (its replace names ../gateway) and go.sum are copied beside
# it to OUT_DIR/.src/oracle and built there. Nothing fetched is committed.
set -euo pipefail
out=$1
here=$(pwd)
version=v1.9.1
src="$out/.src"
rm -rf "$src"; mkdir -p "$src/oracle"
dir=$(cd "$src/oracle" && go mod download -json "github.com/envoyproxy/gateway@$version" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] && [ -f "$dir/go.mod" ] || { echo "no module directory for github.com/envoyproxy/gateway@$version" >&2; exit 1; }
cp -R "$dir" "$src/gateway"
chmod -R u+w "$src/gateway"
mkdir -p "$src/gateway/pooracle"
cp bridge.go.in "$src/gateway/pooracle/bridge.go"
cp main.go go.mod go.sum "$src/oracle/"
cd "$src/oracle"
go build -o "$out/eg-patch" .
# The copy is 41 MB: gone once built (a rebuild copies it again from the module cache).
cd "$here" && rm -rf "$src"
