#!/usr/bin/env bash
# Builds tests/deploy/helmrender offline: GOPATH mode against Debian's packaged Go sources
# (golang-github-masterminds-sprig-dev, golang-github-xeipuuv-gojsonschema-dev,
# golang-gopkg-yaml.v2-dev, golang-gopkg-yaml.v3-dev under /usr/share/gocode). No module proxy.
#   build-helmrender.sh OUT_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build-helmrender.sh OUT_BINARY}
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
# The source sits in a private GOPATH entry (a symlink) so that Go's minimal module compatibility
# resolves sprig's `/v3` import paths; Debian's tree comes second.
gp="$(dirname "$out")/.gopath"
mkdir -p "$gp/src/propertyoverride"
ln -sfn "$here/helmrender" "$gp/src/propertyoverride/helmrender"
export GOPATH="$gp:/usr/share/gocode" GO111MODULE=off GOFLAGS= GOPROXY=off GOTOOLCHAIN=local
export GOCACHE="${GOCACHE:-$(dirname "$out")/.gocache}"
# Rebuild only when the source is newer than the binary.
if [ -x "$out" ] && [ "$out" -nt "$here/helmrender/main.go" ]; then exit 0; fi
cd "$gp/src/propertyoverride/helmrender"
go build -o "$out.tmp" . && mv "$out.tmp" "$out"
