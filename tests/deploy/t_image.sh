#!/usr/bin/env bash
# The Dockerfile, without a Docker engine: the build stage runs exactly the project's setup step
# and `make`, and those work here; the runtime stage installs (through its apt package list) every
# shared library `ldd` lists for the built binary, runs as 65532, carries the OCI labels, and
# stamps the version `propertyoverride version` prints.
#   t_image.sh BUILD_DIR
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
df="$top/Dockerfile"
bin="$build/propertyoverride"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# Instructions of one stage (by its AS name), continuation lines joined, comments dropped.
stage() {
  awk -v want="$1" '
    /^[ \t]*#/ { next }
    { line = line $0 }
    /\\$/ { sub(/\\$/, "", line); next }
    { if (line ~ /^FROM /) { n = split(line, w, " "); cur = w[n] }
      if (cur == want && line != "") print line
      line = "" }' "$df"
}

# --- build stage ---------------------------------------------------------------------------------
[ "$(stage build | head -1)" = "FROM debian:bookworm AS build" ] && ok "build stage: debian:bookworm" ||
  fail "build stage must start FROM debian:bookworm AS build, got: $(stage build | head -1)"
runs=$(stage build | sed -n 's/^RUN //p')
[ "$runs" = $'scripts/setup.sh\nmake' ] && ok "build stage runs exactly scripts/setup.sh, then make" ||
  fail "build stage RUN lines: [$runs], want scripts/setup.sh and make"
# The same two commands outside Docker: the setup step is idempotent (packages already here),
# and make's plan is the setup step, a Release configure of build/ and the build.
if out=$(cd "$top" && PO_SKIP_APT=1 scripts/setup.sh 2>&1); then ok "scripts/setup.sh runs here ($(tail -1 <<<"$out"))"
else fail "scripts/setup.sh: $out"; fi
plan=$(cd "$top" && make -n 2>&1)
for want in 'scripts/setup.sh' 'cmake -S . -B build -DCMAKE_BUILD_TYPE=Release' 'cmake --build build'; do
  grep -qF -- "$want" <<<"$plan" && ok "make runs: $want" || fail "make -n does not show '$want': $plan"
done
stage runtime | grep -qx 'COPY --from=build /src/build/propertyoverride /usr/local/bin/propertyoverride' &&
  ok "runtime copies build/propertyoverride, make's output" || fail "runtime stage must COPY --from=build /src/build/propertyoverride"

# --- version -----------------------------------------------------------------------------------------
cmake_version=$(sed -n 's/^project(propertyoverride VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
arg_version=$(stage runtime | sed -n 's/^ARG PO_VERSION=//p')
[ -n "$cmake_version" ] && [ "$arg_version" = "$cmake_version" ] &&
  ok "ARG PO_VERSION=$arg_version is the CMake project version" || fail "ARG PO_VERSION=$arg_version, CMake project version $cmake_version"
got=$("$bin" version | head -n 1)
[ "$got" = "propertyoverride $cmake_version" ] && ok "'propertyoverride version' prints $got" || fail "'propertyoverride version' printed '$got'"
"$bin" version | sed -n 2p | grep -q '^Envoy API: @grpc/grpc-js-xds@' &&
  ok "'propertyoverride version' names the Envoy API snapshot" || fail "'propertyoverride version' does not name the Envoy API snapshot"
stage runtime | grep -qF 'RUN test "$(/usr/local/bin/propertyoverride version | head -n 1)" = "propertyoverride ${PO_VERSION}"' &&
  ok "the image build checks the stamped version" || fail "runtime stage does not check 'propertyoverride version'"

# --- runtime stage: base, user, labels ----------------------------------------------------------------
[ "$(stage runtime | head -1)" = "FROM debian:bookworm-slim AS runtime" ] && ok "runtime stage: debian:bookworm-slim" ||
  fail "runtime stage base: $(stage runtime | head -1)"
[ "$(stage runtime | sed -n 's/^USER //p' | tail -1)" = "65532:65532" ] && ok "runs as 65532:65532" || fail "USER must be 65532:65532"
[ "$(stage runtime | tail -2 | head -1)" = 'ENTRYPOINT ["/usr/local/bin/propertyoverride"]' ] && ok "entrypoint is the binary" ||
  fail "ENTRYPOINT must be the binary"
labels=$(stage runtime | grep '^LABEL')
for l in title description version revision source; do
  grep -q "org.opencontainers.image.$l=" <<<"$labels" && ok "label org.opencontainers.image.$l" || fail "missing label org.opencontainers.image.$l"
done
grep -qF 'org.opencontainers.image.version="${PO_VERSION}"' <<<"$labels" && ok "the version label is PO_VERSION" || fail "version label is not \${PO_VERSION}"
[ "$(stage runtime | grep -c '^COPY')" = 1 ] && ok "the runtime stage copies only the binary" || fail "runtime stage copies more than the binary"

# --- runtime stage: every shared library ---------------------------------------------------------------
installed=$(stage runtime | sed -n 's/^RUN apt-get update *&& apt-get install -y --no-install-recommends \([^&]*\)&&.*/\1/p' | xargs)
[ -n "$installed" ] && ok "runtime packages: $installed" || fail "no 'apt-get install -y --no-install-recommends ...' in the runtime stage"
# What apt brings along: the Depends/Pre-Depends closure of those packages (from this machine's
# dpkg database, the same Debian release), plus libc6 (essential in every Debian image).
declare -A closure=([libc6]=1)
queue=($installed)
while [ ${#queue[@]} -gt 0 ]; do
  p=${queue[0]}; queue=("${queue[@]:1}")
  [ -n "${closure[$p]:-}" ] && [ "$p" != libc6 ] && continue
  closure[$p]=1
  deps=$(dpkg-query -W -f='${Depends}, ${Pre-Depends}' "$p" 2>/dev/null) || { fail "package $p is not known to dpkg here"; continue; }
  for d in $(tr ',|' '\n\n' <<<"$deps" | sed -E 's/\(.*\)//; s/:any//; s/ //g' | grep -v '^$'); do
    [ -z "${closure[$d]:-}" ] && queue+=("$d")
  done
done
# pkg_of PATH: the Debian package owning a library (usrmerge: try /usr too, and the real file).
pkg_of() {
  local cand pkg
  for cand in "$1" "/usr$1" "$(readlink -f "$1")"; do
    pkg=$(dpkg -S "$cand" 2>/dev/null | head -1 | cut -d: -f1 || true)
    [ -n "$pkg" ] && { echo "$pkg"; return 0; }
  done
  return 0
}
sanitizers='^(libasan|libubsan|liblsan|libtsan)\.so'
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if ldd "$bin" | grep -Eq "^[[:space:]]*(libasan|libubsan)"; then
  # A sanitizer test build: its runtime drags in libstdc++ and libgcc_s, which the image's
  # Release binary does not link. Check what the binary's own NEEDED libraries need instead.
  echo "note: sanitizer build; checking ldd of each NEEDED library except the sanitizer runtimes"
  libs_of_binary() {
    local n p
    for n in $needed; do
      grep -Eq "$sanitizers" <<<"$n" && continue
      p=$(ldd "$bin" | awk -v n="$n" '$1 == n { print $3 }')
      echo "$n $p"
      ldd "$p" | awk '/=>/ { print $1, $3; next } /^\t\// { print $1, $1 }'
    done | sort -u
  }
else
  libs_of_binary() { ldd "$bin" | awk '/=>/ { print $1, $3; next } /^\t\// { print $1, $1 }'; }
fi
nlibs=0
while read -r lib path; do
  case "$lib" in linux-vdso.so.*) continue ;; esac
  nlibs=$((nlibs + 1))
  pkg=$(pkg_of "$path")
  if [ -z "$pkg" ]; then fail "$lib ($path) belongs to no Debian package here"
  elif [ -n "${closure[$pkg]:-}" ]; then ok "$lib: $pkg is installed by the runtime stage"
  else fail "$lib comes from $pkg, which the runtime stage does not install (add it to its apt-get install)"; fi
done < <(libs_of_binary)
[ "$nlibs" -gt 3 ] && ok "$nlibs shared libraries checked" || fail "ldd listed only $nlibs libraries"
# Nothing installed that the binary does not link directly.
for p in $installed; do
  hit=0
  for n in $needed; do
    path=$(ldd "$bin" | awk -v n="$n" '$1 == n { print $3 }')
    [ -n "$path" ] && [ "$(pkg_of "$path")" = "$p" ] && hit=1
  done
  [ "$hit" = 1 ] && ok "$p provides a library the binary links directly" || fail "the runtime stage installs $p, which the binary does not link"
done

# --- .dockerignore ----------------------------------------------------------------------------------------
for p in .git .deps build 'build-*'; do
  grep -qxF -- "$p" "$top/.dockerignore" && ok ".dockerignore excludes $p" || fail ".dockerignore does not exclude $p"
done
[ "$failures" = 0 ] && echo "all passed" || { echo "$failures failure(s)" >&2; exit 1; }
