#!/usr/bin/env bash
# Builds tests/deploy/helmrender offline: GOPATH mode against Debian's packaged Go sources
# (golang-github-masterminds-sprig-dev, golang-github-xeipuuv-gojsonschema-dev,
# golang-gopkg-yaml.v2-dev, golang-gopkg-yaml.v3-dev under /usr/share/gocode). No module proxy.
# (main.go imports sprig without its /v3 suffix: in GOPATH mode only code inside GOPATH gets
# Go's minimal module compatibility, which sprig's own /v3 imports then use.)
#   build-helmrender.sh OUT_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build-helmrender.sh OUT_BINARY}
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
export GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOPROXY=off GOTOOLCHAIN=local
export GOCACHE="${GOCACHE:-$(dirname "$out")/.gocache}"
# One build at a time (ctest runs the deploy tests in parallel); rebuild only when the source is
# newer than the binary.
exec 9>"$out.lock"
flock 9
if [ -x "$out" ] && [ "$out" -nt "$here/helmrender/main.go" ]; then exit 0; fi
command -v go >/dev/null ||
  { echo "build-helmrender: no go compiler: run scripts/setup.sh (Debian golang-go)" >&2; exit 1; }
cd "$here/helmrender"
go build -o "$out.tmp" . && mv "$out.tmp" "$out"
