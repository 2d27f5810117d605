#!/usr/bin/env bash
# allocator_linked: each product executable runs on the malloc the build asked for
# (cmake/allocator.cmake), so a missing package or a lost link line cannot quietly put the
# controller back on glibc's malloc and undo docs/benchmarks.md's "The allocator" figures.
#   t_allocator_linked.sh [--shim SO] EXE WANTED [EXE WANTED ...]   WANTED: jemalloc, mimalloc or libc
# Two independent checks per executable, each run with --help (which exits at once), and a third
# with --shim (tests/cli/failalloc.c, the allocation-failure sweeps' LD_PRELOAD shim):
#   1. the dynamic linker's own record (LD_DEBUG=bindings): every reference to malloc, free,
#      calloc and realloc, from the executable and from every library it loads, glibc included,
#      is bound to WANTED's shared object, and there is at least one;
#   2. the allocator itself, asked to speak at exit: jemalloc prints its statistics under
#      MALLOC_CONF=stats_print:true, mimalloc its options under MIMALLOC_VERBOSE=1; exactly
#      WANTED's marker appears (none for libc);
#   3. the shim still sees the executable's allocations (PO_COUNT_ALLOC: about 1,300 for the
#      controller's --help, 1 for the CLI's; at least one): a preloaded malloc comes before a dynamically linked
#      allocator, so a sweep run on the executable still fails the allocation it means to (a
#      static link would put the allocator in the executable, ahead of the shim, and count 0).
set -u
shim=
if [ "${1:-}" = --shim ]; then shim=$2; shift 2; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

check() { # exe wanted
  local exe=$1 wanted=$2 lib name
  name=$(basename "$exe")
  case $wanted in
  jemalloc) lib=libjemalloc.so.2 ;;
  mimalloc) lib=libmimalloc.so.2 ;;
  libc) lib=libc.so.6 ;;
  *) echo "t_allocator_linked.sh: '$wanted' is not jemalloc, mimalloc or libc" >&2; exit 2 ;;
  esac
  LD_DEBUG=bindings "$exe" --help >/dev/null 2>"$work/bind" || { fail "$name --help exited $?"; return; }
  # "binding file A [0] to B [0]: normal symbol `malloc' [GLIBC_2.2.5]"
  grep -E "symbol \`(malloc|free|calloc|realloc)'" "$work/bind" >"$work/alloc"
  local total wrong
  total=$(wc -l <"$work/alloc")
  wrong=$(grep -v " to [^ ]*/$lib \[" "$work/alloc")
  if [ "$total" -eq 0 ]; then
    fail "$name: the dynamic linker bound no malloc/free/calloc/realloc at all (LD_DEBUG=bindings gave nothing?)"
  elif [ -n "$wrong" ]; then
    fail "$name: built for $wanted ($lib), but $(printf '%s\n' "$wrong" | wc -l) of $total allocator bindings go elsewhere, e.g.:
$(printf '%s\n' "$wrong" | head -3 | sed -E 's/^ *[0-9]+:[[:space:]]*/  /')
  (PO_ALLOCATOR in the CMake cache, cmake/allocator.cmake; Debian's libjemalloc-dev/libmimalloc-dev from scripts/setup.sh)"
  else
    echo "ok: $name: $total allocator bindings, all to $lib"
  fi
  MALLOC_CONF=stats_print:true MIMALLOC_VERBOSE=1 "$exe" --help >/dev/null 2>"$work/speak"
  local je=0 mi=0 says
  grep -q "Begin jemalloc statistics" "$work/speak" && je=1
  grep -q "^mimalloc: " "$work/speak" && mi=1
  says=libc
  [ $je = 1 ] && says=jemalloc
  [ $mi = 1 ] && says=mimalloc
  [ $je = 1 ] && [ $mi = 1 ] && says="jemalloc and mimalloc"
  if [ "$says" != "$wanted" ]; then
    fail "$name: built for $wanted, but the running process answered as $says (jemalloc's stats_print: $je, mimalloc's verbose: $mi)"
  else
    echo "ok: $name: the running allocator answers as $wanted"
  fi
  [ -n "$shim" ] || return
  rm -f "$work/count"
  PO_COUNT_ALLOC="$work/count" LD_PRELOAD="$shim" "$exe" --help >/dev/null 2>&1
  local counted
  counted=$(cat "$work/count" 2>/dev/null || echo 0)
  if [ "$counted" -lt 1 ]; then
    fail "$name: the LD_PRELOAD shim $(basename "$shim") counted no allocation of --help: $wanted's malloc comes before it, so allocation-failure sweeps on this executable would fail nothing"
  else
    echo "ok: $name: the LD_PRELOAD shim still counts its allocations ($counted for --help)"
  fi
}

[ $# -ge 2 ] && [ $(($# % 2)) = 0 ] || { echo "usage: t_allocator_linked.sh EXE WANTED [EXE WANTED ...]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  check "$1" "$2"
  shift 2
done
[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
