#!/usr/bin/env bash
# Builds the test oracles: the real implementations our tests compare the product with (Envoy's
# generated validators, the meshes' own patch code). Test-only Go, built from the Go module proxy
# at the versions each oracle's go.mod pins, with every module checked against go.sum and the Go
# checksum database. The product stays C; nothing fetched or built is committed.
#
#   scripts/build-oracles.sh            build each tests/oracles/NAME/ whose sources changed
#   PO_DEPS_DIR=DIR                     build into DIR/oracles/NAME/ instead of .deps/oracles/
#
# Each oracle is a folder tests/oracles/NAME/ with an executable build.sh. It is run as
#   build.sh OUT_DIR
# with the go command on PATH, GOFLAGS, GOTOOLCHAIN and PO_DEPS_DIR set, and must leave its
# program(s) in OUT_DIR. A stamp (the hash of the folder's files) makes a second run do nothing.
# The tests find an oracle with scripts/lib/oracle.sh (a missing oracle skips a test, or fails it
# under PO_REQUIRE_REAL=1, as in CI).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
deps="${PO_DEPS_DIR:-$top/.deps}"
log() { printf 'build-oracles: %s\n' "$*" >&2; }

command -v go >/dev/null 2>&1 || { log "error: no go command on PATH (Go 1.26 is preinstalled on the CI machine)"; exit 1; }
# Debian's golang-go (1.19, which setup installs for tests/deploy) predates GOTOOLCHAIN: when it
# comes first on PATH, take the machine's own Go from /usr/local/go instead.
go_minor() { local v; v=$(go env GOVERSION 2>/dev/null || echo go1.0); v=${v#go1.}; echo "${v%%.*}"; }
if [ "$(go_minor)" -lt 21 ] && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
[ "$(go_minor)" -ge 21 ] || { log "error: $(go version) is older than Go 1.21 (the oracles' modules need GOTOOLCHAIN); put a newer go first on PATH"; exit 1; }
# The machine's go when a module needs no newer one; otherwise the go command fetches the toolchain
# the module names from the module proxy (checksums verified).
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
export GOFLAGS="-trimpath -buildvcs=false -mod=readonly"
export CGO_ENABLED=0
export PO_DEPS_DIR="$deps"

rc=0
for dir in "$top"/tests/oracles/*/; do
  [ -x "$dir/build.sh" ] || continue
  name=$(basename "$dir")
  out="$deps/oracles/$name"
  sum=$( (cd "$dir" && find . -type f ! -name '*.md' -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16)
  if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$sum" ]; then
    continue
  fi
  log "building oracle $name into $out"
  rm -rf "$out"; mkdir -p "$out"
  t0=$(date +%s)
  if (cd "$dir" && nice -n "${PO_BUILD_NICE:-10}" ./build.sh "$out") >"$deps/oracles/$name.build.log" 2>&1; then
    echo "$sum" >"$out/.stamp"
    log "built oracle $name in $(( $(date +%s) - t0 )) s"
  else
    tail -30 "$deps/oracles/$name.build.log" >&2
    log "error: oracle $name failed to build (log: $deps/oracles/$name.build.log)"
    rc=1
  fi
done
exit $rc
