#!/usr/bin/env bash
# The Dockerfile, without a Docker engine and without building anything: the build stage runs
# exactly the project's setup step and `make` (make's plan read with `make -n`; the runtime
# packages the image installs are those of the -dev packages the setup step installs); the
# runtime stage installs (through its apt package list) every shared library the two binaries of this
# build link, runs as 65532, carries the OCI labels, and stamps the version `propertyoverride
# version` prints.
#   t_image.sh BUILD_DIR   the build this test belongs to (ctest passes CMAKE_BINARY_DIR)
# Only that build's binaries are read (readelf, ldd, `version`): this test runs beside the other
# tests of the same build, so it neither rebuilds nor runs the setup step, and it reads no other
# build folder. A sanitizer build links sanitizer runtimes the Release image never ships: those
# (and what only they pull in) are left out of the library check.
# Never `producer | grep -q` here: under pipefail, grep -q exiting at its first match can fail
# the producer with SIGPIPE, at random (this test once failed that way under load). Capture, then
# match.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
df="$top/Dockerfile"
bin="$build/propertyoverride"
# `propertyoverride controller` execs this one, beside it (controller/cli/CMakeLists.txt): the
# one-shot command links only the engine's libraries, the controller the rest.
ctl="$build/propertyoverride-controller"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
has_line() { grep -qxF -- "$2" <<<"$1"; } # has_line TEXT LINE
has() { grep -qF -- "$2" <<<"$1"; }       # has TEXT FRAGMENT

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
build_stage=$(stage build)
runtime=$(stage runtime)

# --- build stage ---------------------------------------------------------------------------------
[ "$(head -1 <<<"$build_stage")" = "FROM debian:bookworm AS build" ] && ok "build stage: debian:bookworm" ||
  fail "build stage must start FROM debian:bookworm AS build, got: $(head -1 <<<"$build_stage")"
runs=$(sed -n 's/^RUN //p' <<<"$build_stage")
[ "$runs" = $'scripts/setup.sh\nmake' ] && ok "build stage runs exactly scripts/setup.sh, then make" ||
  fail "build stage RUN lines: [$runs], want scripts/setup.sh and make"
# What `make` does there (as in a fresh checkout: no BUILD or CMAKE_FLAGS in the environment):
# the setup step, a Release configure of build/ and the build. -n prints the plan, runs nothing.
plan=$(cd "$top" && env -u BUILD -u CMAKE_FLAGS -u JOBS make -n 2>&1)
for want in 'scripts/setup.sh' 'cmake -S . -B build -DCMAKE_BUILD_TYPE=Release' 'cmake --build build'; do
  has "$plan" "$want" && ok "make runs: $want" || fail "make -n does not show '$want': $plan"
done
has_line "$runtime" 'COPY --from=build /src/build/propertyoverride /usr/local/bin/propertyoverride' &&
  ok "runtime copies build/propertyoverride, make's output" || fail "runtime stage must COPY --from=build /src/build/propertyoverride"

# --- version -----------------------------------------------------------------------------------------
cmake_version=$(sed -n 's/^project(propertyoverride VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
arg_version=$(sed -n 's/^ARG PO_VERSION=//p' <<<"$runtime")
[ -n "$cmake_version" ] && [ "$arg_version" = "$cmake_version" ] &&
  ok "ARG PO_VERSION=$arg_version is the CMake project version" || fail "ARG PO_VERSION=$arg_version, CMake project version $cmake_version"
got=$("$bin" version | head -n 1)
[ "$got" = "propertyoverride $cmake_version" ] && ok "'propertyoverride version' prints $got" || fail "'propertyoverride version' printed '$got'"
envoy_line=$("$bin" version | sed -n 2p)
case $envoy_line in
  "Envoy API: go-control-plane envoy module"*) ok "'propertyoverride version' names the Envoy API snapshot" ;;
  *) fail "'propertyoverride version' does not name the Envoy API snapshot: '$envoy_line'" ;;
esac
has_line "$runtime" 'RUN test "$(/usr/local/bin/propertyoverride version | head -n 1)" = "propertyoverride ${PO_VERSION}"' &&
  ok "the image build checks the stamped version" || fail "runtime stage does not check 'propertyoverride version'"

# --- runtime stage: base, user, labels ----------------------------------------------------------------
[ "$(head -1 <<<"$runtime")" = "FROM debian:bookworm-slim AS runtime" ] && ok "runtime stage: debian:bookworm-slim" ||
  fail "runtime stage base: $(head -1 <<<"$runtime")"
[ "$(sed -n 's/^USER //p' <<<"$runtime" | tail -1)" = "65532:65532" ] && ok "runs as 65532:65532" || fail "USER must be 65532:65532"
[ "$(tail -2 <<<"$runtime" | head -1)" = 'ENTRYPOINT ["/usr/local/bin/propertyoverride"]' ] && ok "entrypoint is the binary" ||
  fail "ENTRYPOINT must be the binary"
labels=$(grep '^LABEL' <<<"$runtime" || true)
for l in title description version revision source; do
  has "$labels" "org.opencontainers.image.$l=" && ok "label org.opencontainers.image.$l" || fail "missing label org.opencontainers.image.$l"
done
has "$labels" 'org.opencontainers.image.version="${PO_VERSION}"' && ok "the version label is PO_VERSION" || fail "version label is not \${PO_VERSION}"
has_line "$runtime" 'COPY --from=build /src/build/propertyoverride-controller /usr/local/bin/propertyoverride-controller' &&
  ok "runtime copies build/propertyoverride-controller beside it" || fail "runtime stage must COPY --from=build /src/build/propertyoverride-controller beside the command"
[ "$(grep -c '^COPY' <<<"$runtime")" = 2 ] && ok "the runtime stage copies only the two binaries" || fail "runtime stage copies more than the two binaries"

# --- runtime packages against the setup step ----------------------------------------------------------
# This machine's dpkg database (the same Debian release as the image), read once: each dpkg call
# costs a third of a second of CPU, and a busy machine multiplies that.
declare -A depends
while IFS=$'\t' read -r name deps; do depends[$name]=$deps; done \
  < <(dpkg-query -W -f='${Package}\t${Depends}, ${Pre-Depends}\n' 2>/dev/null)
dep_names() { tr ',|' '\n\n' <<<"${depends[$1]:-}" | sed -E 's/\(.*\)//; s/:any//; s/ //g' | grep -v '^$' || true; }
installed=$(sed -n 's/^RUN apt-get update *&& apt-get install -y --no-install-recommends \([^&]*\)&&.*/\1/p' <<<"$runtime" | xargs)
[ -n "$installed" ] && ok "runtime packages: $installed" || fail "no 'apt-get install -y --no-install-recommends ...' in the runtime stage"
# The build stage compiles against the -dev packages scripts/setup.sh installs; each library
# package of the image must be what one of those -dev packages depends on (the same library).
setup_pkgs=$(awk '/^packages=\(/ { on = 1; next } on && /^\)/ { exit } on { sub(/#.*/, ""); print }' "$top/scripts/setup.sh" | xargs -n1)
dev_pkgs=$(grep -- '-dev$' <<<"$setup_pkgs" || true)
[ -n "$dev_pkgs" ] && ok "setup step -dev packages: $(xargs <<<"$dev_pkgs")" || fail "no -dev packages found in scripts/setup.sh's packages=( ... )"
for p in $installed; do
  from=
  for d in $dev_pkgs; do
    if has_line "$(dep_names "$d")" "$p"; then from=$d; break; fi
  done
  [ -n "$from" ] && ok "$p is the library of $from, which scripts/setup.sh installs" ||
    fail "the runtime stage installs $p, which no -dev package of scripts/setup.sh depends on"
done

# --- runtime stage: every shared library of this build's binary ---------------------------------------
# What apt brings along: the Depends/Pre-Depends closure of those packages (from this machine's
# dpkg database, the same Debian release), plus libc6 (essential in every Debian image).
declare -A closure=([libc6]=1)
queue=($installed)
while [ ${#queue[@]} -gt 0 ]; do
  p=${queue[0]}; queue=("${queue[@]:1}")
  [ -n "${closure[$p]:-}" ] && [ "$p" != libc6 ] && continue
  closure[$p]=1
  [ -n "${depends[$p]+known}" ] || { fail "package $p is not known to dpkg here"; continue; }
  for d in $(dep_names "$p"); do
    [ -z "${closure[$d]:-}" ] && queue+=("$d")
  done
done
# pkg_of PATH: the Debian package owning a library (usrmerge: try /usr too, and the real file),
# from owner[], which owners fills with one dpkg -S for every path.
declare -A owner
owners() {
  local out line pkg
  out=$(dpkg -S "$@" 2>/dev/null || true) # paths dpkg does not know are left out
  while IFS= read -r line; do
    case "$line" in diversion*|"") continue ;; esac
    pkg=${line%%: /*}; pkg=${pkg%%,*}; pkg=${pkg%%:*}
    owner[${line#*: /}]=$pkg
  done <<<"$out"
}
candidates() { echo "$1"; echo "/usr$1"; readlink -f "$1"; }
pkg_of() {
  local cand
  for cand in $(candidates "$1"); do
    [ -n "${owner[${cand#/}]:-}" ] && { echo "${owner[${cand#/}]}"; return 0; }
  done
  return 0
}
sanitizers='^(libasan|libubsan|liblsan|libtsan|libhwasan)\.so'
needed=$(for b in "$bin" "$ctl"; do readelf -d "$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; done | sort -u)
linked=$( (ldd "$bin"; ldd "$ctl") | sort -u)
# Both binaries' ldd lines name most libraries twice (with different load addresses): the first.
path_of() { awk -v n="$1" '$1 == n { print $3; exit }' <<<"$linked"; }
if grep -Eq "$sanitizers" <<<"$needed"; then
  # A sanitizer test build: its runtime drags in libstdc++ and libgcc_s, which the image's
  # Release binary does not link. Check what the binary's own NEEDED libraries need instead.
  echo "note: sanitizer build ($(grep -E "$sanitizers" <<<"$needed" | xargs)); checking the other NEEDED libraries and theirs"
  libs=$(for n in $(grep -Ev "$sanitizers" <<<"$needed"); do
           p=$(path_of "$n")
           echo "$n $p"
           ldd "$p" | awk '/=>/ { print $1, $3; next } /^\t\// { print $1, $1 }'
         done | sort -u)
else
  libs=$(awk '/=>/ { print $1, $3; next } /^\t\// { print $1, $1 }' <<<"$linked" | sort -u)
fi
owners $(while read -r lib path; do [ -n "$path" ] && candidates "$path"; done <<<"$libs" | sort -u)
nlibs=0
while read -r lib path; do
  case "$lib" in linux-vdso.so.*|"") continue ;; esac
  nlibs=$((nlibs + 1))
  pkg=$(pkg_of "$path")
  if [ -z "$pkg" ]; then fail "$lib ($path) belongs to no Debian package here"
  elif [ -n "${closure[$pkg]:-}" ]; then ok "$lib: $pkg is installed by the runtime stage"
  else fail "$lib comes from $pkg, which the runtime stage does not install (add it to its apt-get install)"; fi
done <<<"$libs"
[ "$nlibs" -gt 3 ] && ok "$nlibs shared libraries checked" || fail "ldd listed only $nlibs libraries"
# Nothing installed that the binary does not link directly. The image's build is Release with the
# default allocator (cmake/allocator.cmake: jemalloc, package libjemalloc2); a test build set to
# glibc's malloc (PO_ALLOCATOR=libc: the sanitizer and fuzz stages) does not link it, so there the
# package is the Release build's, not this build's.
allocator=$(sed -n 's/^PO_ALLOCATOR:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null)
for p in $installed; do
  hit=0
  for n in $needed; do
    path=$(path_of "$n")
    [ -n "$path" ] && [ "$(pkg_of "$path")" = "$p" ] && hit=1
  done
  if [ "$hit" = 1 ]; then ok "$p provides a library the binary links directly"
  elif [ "$p" = libjemalloc2 ] && [ "$allocator" = libc ]; then
    ok "$p: the Release image's allocator (this build is PO_ALLOCATOR=libc)"
  else fail "the runtime stage installs $p, which the binary does not link"; fi
done

# --- .dockerignore ----------------------------------------------------------------------------------------
for p in .git .deps build 'build-*'; do
  grep -qxF -- "$p" "$top/.dockerignore" && ok ".dockerignore excludes $p" || fail ".dockerignore does not exclude $p"
done
[ "$failures" = 0 ] && echo "all passed" || { echo "$failures failure(s)" >&2; exit 1; }
