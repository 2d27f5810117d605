#!/usr/bin/env bash
# Builds one envoy-validate program per embedded Envoy API snapshot into $1:
# envoy-validate-vX.Y.Z for each folder vX.Y.Z/ here (the envoy module version it pins in its own
# go.mod and go.sum; scripts/build-oracles.sh runs this with GOFLAGS=-mod=readonly: every module
# checked against that go.sum and the checksum database). The .go files here are shared; each
# version's imports.go links in every /v3 package of that version, so that protojson resolves any
# `@type`, a case may name any message and -descriptor-set prints the version's whole API.
#
#   build.sh OUT_DIR                  build every version (each in OUT_DIR/.src-vX.Y.Z/)
#   build.sh --write-imports vX.Y.Z   (re)write vX.Y.Z/imports.go from the module (a new version)
#
# A version's imports.go that misses a /v3 package of its module fails the build, naming it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
module=github.com/envoyproxy/go-control-plane/envoy

# The module's directory in the module cache, downloaded (and verified) when missing.
module_dir() { (cd "$here/$1" && go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'); }

# Every package of the module whose path ends in /v3, sorted: the snapshot is envoy/**/v3/*.proto.
v3_packages() {
  local dir
  dir=$(module_dir "$1")
  [ -n "$dir" ] && [ -d "$dir" ] || { echo "envoy-validate: no module directory for $module@$1" >&2; return 1; }
  (cd "$dir" && find . -name '*.pb.go' | sed 's|/[^/]*$||;s|^\./||' | grep '/v3$' | LC_ALL=C sort -u)
}

write_imports() {
  local v=$1
  {
    echo "// Every /v3 package of the envoy module $v (written by build.sh --write-imports $v;"
    echo "// build.sh fails when one is missing)."
    echo "package main"
    echo
    echo "import ("
    v3_packages "$v" | sed "s|.*|\t_ \"$module/&\"|"
    echo ")"
  } >"$here/$v/imports.go"
}

# Fails naming each /v3 package of the version that imports.go lacks.
check_imports() {
  local v=$1 missing
  missing=$(comm -23 <(v3_packages "$v") \
    <(sed -n "s|^[[:space:]]*_ \"$module/\(.*\)\"$|\1|p" "$here/$v/imports.go" | LC_ALL=C sort -u))
  if [ -n "$missing" ]; then
    echo "envoy-validate: $v/imports.go lacks these /v3 packages of $module@$v:" >&2
    printf '  %s\n' $missing >&2
    echo "run: tests/oracles/envoy-validate/build.sh --write-imports $v" >&2
    return 1
  fi
}

if [ "${1:-}" = --write-imports ]; then
  write_imports "$2"
  exit 0
fi

out=$1
for vdir in "$here"/v*/; do # every version's list checked before any build
  v=$(basename "$vdir")
  grep -q "^[[:space:]]*$module $v\$" "$vdir/go.mod" || { echo "envoy-validate: $v/go.mod does not require $module $v" >&2; exit 1; }
  check_imports "$v"
done
for vdir in "$here"/v*/; do
  v=$(basename "$vdir")
  src="$out/.src-$v"
  rm -rf "$src"; mkdir -p "$src"
  cp "$here"/*.go "$vdir"/go.mod "$vdir"/go.sum "$vdir"/imports.go "$src/"
  t0=$(date +%s)
  (cd "$src" && go build -o "$out/envoy-validate-$v" .)
  got=$("$out/envoy-validate-$v" -version)
  [ "$got" = "$v" ] || { echo "envoy-validate: envoy-validate-$v was built from envoy $got" >&2; exit 1; }
  echo "envoy-validate-$v built in $(( $(date +%s) - t0 )) s"
done
