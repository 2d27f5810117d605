#!/usr/bin/env bash
# Builds the Istio oracle (main.go says what it does) into OUT_DIR/istio-envoyfilter.
#
#   build.sh OUT_DIR        (scripts/build-oracles.sh runs it)
#
# Built by default, in CI too: its cold build (82 MB of module downloads, 413 MB unpacked, 1.5 GB
# of build cache) took 6.4 minutes on the 2-core machine while six other builds shared it
# (230 s user + 58 s system CPU; tests/oracles/README.md), and its test takes about 30 s.
#
# istiod turns an EnvoyFilter into patches with an unexported function
# (pilot/pkg/model.convertToEnvoyFilterWrapper). The go command downloads the module at the
# version go.mod pins (only pseudo-versions of istio.io/istio are served: the newest is pinned),
# its checksum verified against the checksum database; the module directory is copied from the
# module cache to OUT_DIR/.src/istio and ONE file is added to the copy,
# pilot/pkg/model/zz_propertyoverride_oracle_export.go (export_model.go.in here), which exports
# that function; nothing else of Istio is changed. The *.go files, go.mod (its replace names
# ../istio) and go.sum are copied beside it to OUT_DIR/.src/oracle and built there, every other
# module checked against go.sum. Nothing fetched is committed.
set -euo pipefail
out=$1
here=$(pwd)

version=$(awk '$1 == "istio.io/istio" && $2 ~ /^v/ { print $2; exit }' go.mod)
[ -n "$version" ] || { echo "build.sh: go.mod pins no istio.io/istio" >&2; exit 1; }
src="$out/.src"
rm -rf "$src"; mkdir -p "$src/oracle"
info=$(cd "$src/oracle" && go mod download -json "istio.io/istio@$version")
dir=$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
sum=$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p')
[ -n "$dir" ] && [ -f "$dir/go.mod" ] || { echo "no module directory for istio.io/istio@$version" >&2; exit 1; }
# the replace directive takes the copy unchecked: the module it is copied from must be go.sum's
grep -qxF "istio.io/istio $version $sum" go.sum || { echo "istio.io/istio@$version: $sum is not go.sum's" >&2; exit 1; }
cp -R "$dir" "$src/istio"
chmod -R u+w "$src/istio"
cp export_model.go.in "$src/istio/pilot/pkg/model/zz_propertyoverride_oracle_export.go"
cp ./*.go go.mod go.sum "$src/oracle/"
cd "$src/oracle"
go build -o "$out/istio-envoyfilter" .
# The copy is 58 MB: gone once built (a rebuild copies it again from the module cache).
cd "$here" && rm -rf "$src"
