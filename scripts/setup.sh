#!/usr/bin/env bash
# One setup step for a fresh Debian 12 machine (ARCHITECTURE.md section 6). Idempotent: each stage
# checks for its result first, so a second run takes well under a second.
#
#   scripts/setup.sh            install packages, fetch and verify the pinned sources into .deps/
#   PO_SKIP_APT=1 scripts/...   skip the Debian package stage (packages already present)
#
# Nothing fetched here is committed: .deps/ is in .gitignore.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
deps="${PO_DEPS_DIR:-$top/.deps}"
mkdir -p "$deps"

log() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# --- Debian packages ------------------------------------------------------------------------
# Build tools, the libraries the code links, and the test tools.
packages=(
  build-essential cmake pkg-config git ca-certificates
  libcurl4-openssl-dev libyaml-dev libcmocka-dev libmicrohttpd-dev libgnutls28-dev libzstd-dev
  valgrind clang libclang-rt-14-dev
  dpkg-dev gpgv debian-archive-keyring openssl curl jq
  patch  # cmake/upb.cmake and cmake/jsonc.cmake apply proto/upb-patches and cmake/json-c-patches
  python3-yaml  # tests/cli/t_yaml_quoting.sh: PyYAML, a YAML 1.1 reader of what render writes
  # tests/deploy: the Helm-compatible renderer, built offline from Debian's Go sources
  # (golang-go also downloads the Envoy API modules below when the machine has no newer Go)
  golang-go golang-github-masterminds-sprig-dev golang-github-xeipuuv-gojsonschema-dev
  golang-gopkg-yaml.v2-dev golang-gopkg-yaml.v3-dev
  # the controller executable's malloc (cmake/allocator.cmake: PO_ALLOCATOR; jemalloc by default)
  libjemalloc-dev libmimalloc-dev
)
# Packages held at one version: docs/benchmarks.md's allocator figures are of these, and a newer
# allocator changes them. Installed as NAME=VERSION (apt checks each .deb against the archive's
# signed index); below, the installed version and the files of its library are checked too.
declare -A pinned=([libjemalloc-dev]=5.3.0-1 [libmimalloc-dev]=2.0.9+ds-2)
# The library package each pinned -dev package brings (its files are what the binaries load).
declare -A pinned_lib=([libjemalloc-dev]=libjemalloc2 [libmimalloc-dev]=libmimalloc2.0)

installed_version() { # PACKAGE: its version if installed, else nothing
  # dpkg-query exits 1 for a package this machine's dpkg has never heard of (a fresh machine's
  # cmake, say): that is "not installed", not a failure of the setup (set -e, pipefail).
  { dpkg-query -W -f='${Status}\t${Version}' "$1" 2>/dev/null || true; } |
    awk -F'\t' '$1 == "install ok installed" { print $2 }'
}
need_apt=()
for p in "${packages[@]}"; do
  v=$(installed_version "$p")
  if [ -n "${pinned[$p]:-}" ]; then
    [ "$v" = "${pinned[$p]}" ] || need_apt+=("$p=${pinned[$p]}")
  else
    [ -n "$v" ] || need_apt+=("$p")
  fi
done
# kubectl: the machine may ship its own; otherwise Debian's kubernetes-client provides it.
command -v kubectl >/dev/null 2>&1 || need_apt+=(kubernetes-client)
# npm: the machine's Node.js may come with its own npm; Debian's npm would conflict with it.
command -v npm >/dev/null 2>&1 || need_apt+=(npm)

if [ "${PO_SKIP_APT:-0}" != 1 ] && [ ${#need_apt[@]} -gt 0 ]; then
  log "installing Debian packages: ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends --allow-downgrades "${need_apt[@]}" >/dev/null
fi
# The pinned packages: at their version, and their library's files as the signed .deb shipped them
# (dpkg --verify compares each file with the checksum dpkg recorded from the package).
for p in "${!pinned[@]}"; do
  for q in "$p" "${pinned_lib[$p]}"; do
    v=$(installed_version "$q")
    [ "$v" = "${pinned[$p]}" ] ||
      die "$q is at '${v:-not installed}', the build is pinned to ${pinned[$p]} (scripts/setup.sh installs it; PO_SKIP_APT=1 skipped that)"
  done
  bad=$(dpkg --verify "${pinned_lib[$p]}" 2>&1 | grep -v '^??5?????? c ' || true)
  [ -z "$bad" ] || die "${pinned_lib[$p]}'s files differ from what its package installed: $bad"
done

# --- Envoy API snapshots: go-control-plane's envoy Go module at each version proto/snapshots.tsv
# lists, and the modules its descriptors import, hashes checked (scripts/fetch-envoy-api.sh) -----
PO_DEPS_DIR="$deps" "$top/scripts/fetch-envoy-api.sh"

# --- Debian source packages: grpc (for upb) and json-c, each built from a patched copy ----------
# apt-get source with deb-src entries derived from the machine's own Debian sources (same URIs,
# suites, keys), in an apt configuration of our own under .deps/apt; made once per run.
apt_ready=0
debian_apt() {
  [ "$apt_ready" = 1 ] && return
  apt_dir="$deps/apt"
  rm -rf "$apt_dir"; mkdir -p "$apt_dir"/{sources.list.d,lists/partial,cache/archives/partial,preferences.d}
  local found=0 f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    grep -q 'debian' "$f" || continue
    sed -E 's/^Types:.*/Types: deb-src/' "$f" > "$apt_dir/sources.list.d/$(basename "$f")"
    found=1
  done
  if [ -f /etc/apt/sources.list ]; then
    grep -E '^deb ' /etc/apt/sources.list | grep debian | sed -E 's/^deb /deb-src /' \
      > "$apt_dir/sources.list.d/derived.list" || true
    [ -s "$apt_dir/sources.list.d/derived.list" ] && found=1
  fi
  [ "$found" = 1 ] || die "no Debian sources configured in /etc/apt to derive deb-src entries from"
  cat > "$apt_dir/apt.conf" <<CONF
Dir::Etc::SourceList "/dev/null";
Dir::Etc::SourceParts "$apt_dir/sources.list.d";
Dir::Etc::Preferences "/dev/null";
Dir::Etc::PreferencesParts "$apt_dir/preferences.d";
Dir::State::Lists "$apt_dir/lists";
Dir::Cache "$apt_dir/cache";
Dir::State::status "/var/lib/dpkg/status";
APT::Sandbox::User "root";
CONF
  APT_CONFIG="$apt_dir/apt.conf" apt-get update -qq >&2
  apt_ready=1
}
# fetch_orig PACKAGE VERSION ORIG: downloads the source package into .deps/src and prints the path
# of its upstream tarball ORIG, verified against the checksum in the .dsc (signed by the archive,
# verified by apt). Call debian_apt first (not in the $(...) that reads the path).
fetch_orig() {
  local pkg=$1 version=$2 orig=$3 src="$deps/src"
  mkdir -p "$src"
  (cd "$src" && APT_CONFIG="$apt_dir/apt.conf" apt-get source -qq --download-only "$pkg=$version" >/dev/null)
  [ -f "$src/$orig" ] || die "apt-get source did not fetch $orig"
  local want got
  want=$(awk -v o="$orig" '/^Checksums-Sha256:/{f=1;next} /^[^ ]/{f=0} f && $3==o{print $1}' "$src/${pkg}_$version.dsc")
  got=$(sha256sum "$src/$orig" | cut -d' ' -f1)
  [ -n "$want" ] && [ "$want" = "$got" ] || die "checksum mismatch for $orig: got $got, .dsc says $want"
  echo "$src/$orig"
}

# upb e4635f2 from Debian's grpc 1.51.1 source package
grpc_version=1.51.1-3
# sha256 of the upstream tarball as Debian ships it (also checked by apt against the signed .dsc).
grpc_orig_sha256="${PO_GRPC_ORIG_SHA256:-}"
upb_dir="$deps/grpc"
if [ ! -f "$upb_dir/.ok-$grpc_version" ]; then
  log "fetching grpc $grpc_version source (for upb)"
  debian_apt
  orig=$(fetch_orig grpc "$grpc_version" grpc_1.51.1.orig.tar.gz)
  got=$(sha256sum "$orig" | cut -d' ' -f1)
  if [ -n "$grpc_orig_sha256" ] && [ "$grpc_orig_sha256" != "$got" ]; then
    die "grpc orig tarball sha256 $got differs from the pinned $grpc_orig_sha256"
  fi
  rm -rf "$upb_dir"; mkdir -p "$upb_dir"
  # Only the parts our CMake compiles: upb, utf8_range and the generated descriptor.upb.*.
  tar -xzf "$orig" -C "$upb_dir" --strip-components=1 --wildcards \
    '*/third_party/upb/upb/*' '*/third_party/upb/third_party/utf8_range/*' \
    '*/src/core/ext/upb-generated/google/protobuf/descriptor.upb.*'
  [ -f "$upb_dir/third_party/upb/upb/def.c" ] || die "upb sources missing from $orig"
  touch "$upb_dir/.ok-$grpc_version"
fi

# json-c 0.16 from Debian's json-c 0.16-2 source package (bookworm's libjson-c5 is built from
# it): cmake/jsonc.cmake builds it static with cmake/json-c-patches applied (out of memory).
jsonc_version=0.16-2
jsonc_dir="$deps/json-c"
if [ ! -f "$jsonc_dir/.ok-$jsonc_version" ]; then
  log "fetching json-c $jsonc_version source"
  debian_apt
  orig=$(fetch_orig json-c "$jsonc_version" json-c_0.16.orig.tar.gz)
  rm -rf "$jsonc_dir"; mkdir -p "$jsonc_dir"
  tar -xzf "$orig" -C "$jsonc_dir" --strip-components=1
  [ -f "$jsonc_dir/json_tokener.c" ] || die "json-c sources missing from $orig"
  touch "$jsonc_dir/.ok-$jsonc_version"
fi

# --- tests/deploy: Kubernetes object schemas (npm, exact versions from the committed lock) ------
# BEGIN tests/deploy npm packages
deploy_node="$deps/deploy-node"
deploy_lock="$top/tests/deploy/package-lock.json"
if [ ! -f "$deploy_node/.ok" ] || ! cmp -s "$deploy_lock" "$deploy_node/package-lock.json"; then
  log "installing tests/deploy npm packages (kubernetes-models) into $deploy_node"
  rm -rf "$deploy_node"; mkdir -p "$deploy_node"
  cp "$top/tests/deploy/package.json" "$deploy_lock" "$deploy_node/"
  (cd "$deploy_node" && npm ci --silent --ignore-scripts --no-audit --no-fund >/dev/null)
  touch "$deploy_node/.ok"
fi
# END tests/deploy npm packages

# --- tests/cli: Istio's published schemas (@kubernetes-models/istio, exact version from the lock) --
# Its own folder: it needs newer @kubernetes-models/base than tests/deploy's models, and
# installing it must never disturb theirs.
istio_node="$deps/istio-node"
istio_lock="$top/tests/cli/istio-schema/package-lock.json"
if [ ! -f "$istio_node/.ok" ] || ! cmp -s "$istio_lock" "$istio_node/package-lock.json"; then
  log "installing tests/cli Istio schema package (@kubernetes-models/istio) into $istio_node"
  rm -rf "$istio_node"; mkdir -p "$istio_node"
  cp "$top/tests/cli/istio-schema/package.json" "$istio_lock" "$istio_node/"
  (cd "$istio_node" && npm ci --silent --ignore-scripts --no-audit --no-fund >/dev/null)
  touch "$istio_node/.ok"
fi

if ! PO_DEPS_DIR="$deps" "$top/scripts/build-kube.sh"; then
  # CI (PO_REQUIRE_REAL=1) must test on the real server: stop here, with build-kube.sh's error above.
  [ "${PO_REQUIRE_REAL:-0}" = 1 ] && { log "error: scripts/build-kube.sh failed above, and PO_REQUIRE_REAL=1 needs the real kube-apiserver/etcd"; exit 1; }
  log "warning: no real kube-apiserver/etcd (scripts/build-kube.sh failed above): the tests on the real server will be skipped"
fi
# The oracles the tests compare the product with (tests/oracles/, test-only Go).
if ! PO_DEPS_DIR="$deps" "$top/scripts/build-oracles.sh"; then
  [ "${PO_REQUIRE_REAL:-0}" = 1 ] && { log "error: scripts/build-oracles.sh failed above, and PO_REQUIRE_REAL=1 needs every oracle"; exit 1; }
  log "warning: an oracle failed to build (above): the tests that ask it will be skipped"
fi
log "ok: Envoy API snapshots listed in $deps/envoy-go, upb in $upb_dir/third_party/upb"
