#!/usr/bin/env bash
# Downloads the Envoy API snapshots the build embeds (proto/snapshots.tsv): go-control-plane's
# envoy Go module at each version, and the modules its descriptors import at the versions that
# version's own go.mod requires. `go mod download` checks each against the Go checksum database;
# each must also have the hash pinned in proto/envoy-modules.tsv. Nothing is compiled: the build
# reads the raw descriptors in the .pb.go files (proto/tools/extract.c). Nothing fetched is
# committed.
#
#   scripts/fetch-envoy-api.sh         (scripts/setup.sh runs it)
#   PO_DEPS_DIR=DIR                    write DIR/envoy-go/ instead of .deps/envoy-go/
#   PO_ENVOY_SNAPSHOTS=FILE PO_ENVOY_PINS=FILE   other tables than proto/snapshots.tsv and
#                                      proto/envoy-modules.tsv (tests/proto/t_fetch_envoy_api.sh)
#
# Writes DIR/envoy-go/<version>.dirs: the module folders (in the Go module cache) the build
# extracts snapshot <version> from, one a line. A second run with the tables unchanged and the
# folders still there does nothing.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
deps="${PO_DEPS_DIR:-$top/.deps}"
out="$deps/envoy-go"
snapshots="${PO_ENVOY_SNAPSHOTS:-$top/proto/snapshots.tsv}" pins="${PO_ENVOY_PINS:-$top/proto/envoy-modules.tsv}"
log() { printf 'fetch-envoy-api: %s\n' "$*" >&2; }
die() { printf 'fetch-envoy-api: error: %s\n' "$*" >&2; exit 1; }

envoy=github.com/envoyproxy/go-control-plane/envoy
# The modules holding the .proto files Envoy's import (those go.mod does not require are skipped).
imported=(github.com/cncf/xds/go github.com/envoyproxy/protoc-gen-validate google.golang.org/protobuf
          google.golang.org/genproto/googleapis/api google.golang.org/genproto/googleapis/rpc
          go.opentelemetry.io/proto/otlp cel.dev/expr github.com/prometheus/client_model)

versions=$(awk -F'\t' '!/^#/ && NF {print $1}' "$snapshots")
[ -n "$versions" ] || die "no snapshot in $snapshots"
stamp=$(cat "$snapshots" "$pins" | sha256sum | cut -c1-16)
up_to_date() {
  [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ] || return 1
  local v d
  for v in $versions; do
    [ -f "$out/$v.dirs" ] || return 1
    while IFS= read -r d; do [ -d "$d" ] || return 1; done <"$out/$v.dirs"
  done
}
up_to_date && exit 0

command -v go >/dev/null 2>&1 || die "no go command on PATH (Go 1.26 is preinstalled on the CI machine)"
# Debian's golang-go (1.19) may come first on PATH: take the machine's own Go, as build-oracles.sh does.
go_minor() { local v; v=$(go env GOVERSION 2>/dev/null || echo go1.0); v=${v#go1.}; echo "${v%%.*}"; }
if [ "$(go_minor)" -lt 21 ] && [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"; fi
export GOFLAGS= GOTOOLCHAIN=local
command -v jq >/dev/null 2>&1 || die "jq is needed (scripts/setup.sh installs it)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# download MODULE VERSION: the module's folder in the cache, once its hash is the pinned one.
download() {
  local json sum want
  # Outside any module (the temporary folder), so nothing but the checksum database vouches for it.
  json=$(cd "$work" && go mod download -json "$1@$2" 2>&1) || die "go mod download $1@$2: $json"
  sum=$(jq -r '.Sum // empty' <<<"$json")
  [ -n "$sum" ] || die "go mod download $1@$2: $(jq -r '.Error // "no hash"' <<<"$json")"
  want=$(awk -F'\t' -v m="$1" -v v="$2" '$1 == m && $2 == v {print $3}' "$pins")
  [ -n "$want" ] || die "$1 $2 has no pinned hash in $pins (go says $sum): add it once checked"
  [ "$sum" = "$want" ] || die "$1 $2: hash $sum, but $pins pins $want"
  jq -r .Dir <<<"$json"
}

mkdir -p "$out"
for v in $versions; do
  log "go-control-plane envoy $v and the modules it imports"
  dirs="$work/$v.dirs"
  download "$envoy" "$v" >"$dirs"
  gomod=$(cd "$work" && go mod download -json "$envoy@$v" | jq -r .GoMod)
  for m in "${imported[@]}"; do
    mv=$(awk -v m="$m" '$1 == "require" && $2 == m {print $3} $1 == m {print $2}' "$gomod")
    [ -n "$mv" ] || continue
    dir=$(download "$m" "$mv")
    # google.golang.org/protobuf: only its own types; internal/ holds test protos of other names.
    [ "$m" = google.golang.org/protobuf ] && dir="$dir/types"
    echo "$dir" >>"$dirs"
  done
  mv "$dirs" "$out/$v.dirs"
done
echo "$stamp" >"$out/.stamp"
