#!/usr/bin/env bash
# Builds the real kube-apiserver and etcd into .deps/bin/ for the end-to-end tests that run
# against them (scripts/lib/real-cluster.sh, tests/realapi, docs/real-apiserver.md).
#
#   scripts/build-kube.sh             build, or do nothing when .deps/bin holds binaries of the
#                                     pinned versions (a stamp file records what was built)
#   PO_SKIP_KUBE=1 scripts/...        do nothing (the tests that need the binaries then skip)
#   PO_DEPS_DIR=DIR                   build into DIR/bin instead of .deps/bin
#
# What is pinned, and where: scripts/kube/apiserver/go.mod (k8s.io/kubernetes and the k8s.io/*
# staging modules of the same release) and scripts/kube/etcd/go.mod (go.etcd.io/etcd/server/v3;
# main.go calls its etcdmain). Those two folders are the only sources; they are copied into
# .deps/kube-build/ and the go command fetches the modules from the module proxy (GOPROXY) and
# verifies each one against the Go checksum database (GOSUMDB). Nothing fetched or generated is
# committed: the go.sum files live under .deps/kube-build/ only.
#
# Toolchain: the machine's go when it is new enough for the modules (go 1.24 for etcd 3.5.24);
# otherwise the go command's own toolchain download (GOTOOLCHAIN=auto, from the module proxy, with
# checksums verified); a go older than 1.21 cannot do that, so the toolchain is then fetched as
# the golang.org/toolchain module with `go mod download` and used from there.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
deps="${PO_DEPS_DIR:-$top/.deps}"
bin="$deps/bin"
work="$deps/kube-build"
src="$top/scripts/kube"

log() { printf 'build-kube: %s\n' "$*" >&2; }
die() { printf 'build-kube: error: %s\n' "$*" >&2; exit 1; }

[ "${PO_SKIP_KUBE:-0}" = 1 ] && { log "PO_SKIP_KUBE=1: not building kube-apiserver and etcd"; exit 0; }

# The pins, read from the go.mod files so that there is one place to change them.
kube_version=$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$src/apiserver/go.mod")
etcd_version=$(awk '$1=="require" && $2=="go.etcd.io/etcd/server/v3" {print $3}' "$src/etcd/go.mod")
[ -n "$kube_version" ] && [ -n "$etcd_version" ] || die "cannot read the pinned versions from $src/*/go.mod"
# Any edit to our sources (a changed pin, a changed replace) rebuilds.
sources_sum=$(cat "$src"/apiserver/go.mod "$src"/apiserver/tools.go "$src"/etcd/go.mod "$src"/etcd/main.go | sha256sum | cut -c1-16)
stamp_text="kube-apiserver $kube_version etcd $etcd_version sources $sources_sum"
stamp="$bin/.kube-stamp"

# The stamp says what was built; the binaries must still be that build: an emptied, truncated or
# replaced file would otherwise be taken as built (and every real-server test would then fail to
# start instead of this script rebuilding it). Asking each for its version costs a second or two.
built() {
  [ -x "$bin/kube-apiserver" ] && [ -x "$bin/etcd" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_text" ] || return 1
  [ "$("$bin/kube-apiserver" --version 2>/dev/null)" = "Kubernetes $kube_version" ] ||
    { log "$bin/kube-apiserver does not report Kubernetes $kube_version (damaged?): rebuilding"; return 1; }
  # grep without -q reads all of etcd's output: no SIGPIPE for etcd under pipefail
  "$bin/etcd" --version 2>/dev/null | grep -x "etcd Version: ${etcd_version#v}" >/dev/null ||
    { log "$bin/etcd does not report etcd Version: ${etcd_version#v} (damaged?): rebuilding"; return 1; }
}
if built; then
  exit 0
fi

command -v go >/dev/null 2>&1 || die "no go command on PATH: install Go (Debian: golang-go) or put a Go toolchain on PATH"

# --- choose the toolchain ----------------------------------------------------------------------
need_go=1.24 # the highest go line among the modules built (etcd 3.5.24's go.mod)
toolchain_go=go1.24.13 # the Go release Kubernetes v1.32.13 itself is built with (.go-version)
go_minor() { # "go1.26.8" -> 26
  local v=${1#go}
  v=${v#1.}
  echo "${v%%.*}"
}
gocmd=go
have=$(go env GOVERSION 2>/dev/null || go version | awk '{print $3}')
have_minor=$(go_minor "$have")
export GOFLAGS="-trimpath -buildvcs=false -mod=mod"
export CGO_ENABLED=0
if [ "$have_minor" -ge "${need_go#1.}" ]; then
  export GOTOOLCHAIN=local
  log "using the machine's $have ($(command -v go))"
elif [ "$have_minor" -ge 21 ]; then
  export GOTOOLCHAIN=auto
  log "the machine's $have is older than go $need_go: letting the go command fetch its toolchain (GOTOOLCHAIN=auto)"
else
  log "the machine's $have predates toolchain downloads: fetching $toolchain_go as the golang.org/toolchain module"
  tc_mod="golang.org/toolchain@v0.0.1-$toolchain_go.$(go env GOOS)-$(go env GOARCH)"
  tc_dir=$(cd "$(mktemp -d)" && GOFLAGS= go mod download -json "$tc_mod" | awk -F'"' '$2=="Dir"{print $4}') ||
    die "go mod download $tc_mod failed"
  [ -x "$tc_dir/bin/go" ] || die "the toolchain module $tc_mod has no bin/go"
  gocmd="$tc_dir/bin/go"
  export GOTOOLCHAIN=local
fi

# --- can we reach the module proxy? --------------------------------------------------------------
probe_out=$(cd "$(mktemp -d)" && "$gocmd" mod download -json "k8s.io/kubernetes@$kube_version" 2>&1) || {
  printf '%s\n' "$probe_out" | sed 's/^/  /' >&2
  die "cannot fetch k8s.io/kubernetes@$kube_version from the Go module proxy (GOPROXY=$("$gocmd" env GOPROXY)).
  The real-API-server tests need network access to the module proxy once, to build kube-apiserver and
  etcd into $bin; set GOPROXY to a reachable proxy, or PO_SKIP_KUBE=1 to skip (those tests then skip;
  binaries of other pins left in $bin make them fail instead, naming both versions)."
}

mkdir -p "$bin" "$work"
rm -f "$stamp"

build_one() { # name, source folder, package, output, extra ldflags
  local name=$1 from=$2 pkg=$3 out=$4 ldflags=$5 dir="$work/$1" t0 t1
  log "building $name ($pkg) in $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$from"/* "$dir"/
  t0=$(date +%s)
  (cd "$dir" && "$gocmd" mod tidy) >"$work/$name.tidy.log" 2>&1 || {
    tail -30 "$work/$name.tidy.log" >&2
    die "go mod tidy for $name failed (log: $work/$name.tidy.log)"
  }
  # /usr/bin/time -v records wall time and peak memory (the Maximum resident set size of the
  # go command and the compilers and linker it runs).
  local timer=()
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -v -o "$work/$name.time")
  (cd "$dir" && nice -n "${PO_BUILD_NICE:-10}" "${timer[@]}" "$gocmd" build -ldflags "-s -w $ldflags" -o "$out.tmp" "$pkg") \
    >"$work/$name.build.log" 2>&1 || {
    tail -40 "$work/$name.build.log" >&2
    die "go build of $pkg failed (log: $work/$name.build.log)"
  }
  mv "$out.tmp" "$out"
  t1=$(date +%s)
  local rss=""
  [ -f "$work/$name.time" ] && rss=$(awk -F': ' '/Maximum resident set size/{printf "%d MB", $2/1024}' "$work/$name.time")
  log "built $out in $((t1 - t0)) s (go mod tidy + go build${rss:+, peak memory $rss})"
  printf '%s %s: %d s wall, peak RSS %s, %s, %s\n' "$name" "$([ "$name" = etcd ] && echo "$etcd_version" || echo "$kube_version")" \
    "$((t1 - t0))" "${rss:-unknown}" "$("$gocmd" env GOVERSION)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$work/build-times.txt"
}

kv=k8s.io/component-base/version
major=${kube_version#v}; major=${major%%.*}
minor=${kube_version#v*.}; minor=${minor%%.*}
# The version the server reports (kubectl version, /version); the API behaviour itself follows
# the source release, not these strings.
build_one kube-apiserver "$src/apiserver" k8s.io/kubernetes/cmd/kube-apiserver "$bin/kube-apiserver" \
  "-X $kv.gitVersion=$kube_version -X $kv.gitMajor=$major -X $kv.gitMinor=$minor -X $kv.gitTreeState=clean -X $kv.buildDate=1970-01-01T00:00:00Z"
build_one etcd "$src/etcd" . "$bin/etcd" ""

"$bin/kube-apiserver" --version >&2
"$bin/etcd" --version 2>&1 | sed -n 1p >&2 # sed reads it all: no SIGPIPE under pipefail
printf '%s\n' "$stamp_text" >"$stamp"
log "ok: $bin/kube-apiserver ($kube_version), $bin/etcd ($etcd_version); times in $work/build-times.txt"
