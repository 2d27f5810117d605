#!/usr/bin/env bash
# Every test, in the order that finds problems fastest:
#   1. Release build (warnings as errors when PO_WERROR=1), all ctest tests
#      (but the e2e suites labelled local-twin, when the real kube-apiserver is built: their
#      real-server twins run here, and they run in stage 2)
#   2. ASan+UBSan Debug build, all ctest tests again (but those labelled no-asan)
#   3. valgrind (memcheck) on the tests labelled "valgrind"
#   4. libFuzzer targets, each for a bounded time (PO_FUZZ_SECONDS, default 15)
# The malloc (cmake/allocator.cmake): the Release build's controller links the Release default
# (PO_ALLOCATOR empty, so an experiment left in build/'s cache cannot linger); ASan and libFuzzer
# bring their own malloc, so their builds say libc; valgrind's tests are the tests' own
# executables, which never link another allocator.
# Set PO_TEST_STAGES="release asan valgrind fuzz" to choose stages.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=$(nproc)
stages=${PO_TEST_STAGES:-release asan valgrind fuzz}
werror=${PO_WERROR:-0}
[ "$werror" = 1 ] && werror=ON || werror=OFF
summary=()

stage() { printf '\n=== %s ===\n' "$*"; }

configure() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -DPO_WERROR=$werror "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

for s in $stages; do
  case $s in
  release)
    stage "release build + ctest"
    configure build -DCMAKE_BUILD_TYPE=Release -DPO_ALLOCATOR=
    # With the real kube-apiserver built, an e2e suite that runs on both servers runs here on the
    # real one only; its local-server run (label local-twin) is the ASan stage's. Without it the
    # real runs skip (or fail, under PO_REQUIRE_REAL=1), and the local runs stay here too.
    twins=()
    if (. scripts/lib/real-cluster.sh && lc_have_real); then twins=(-LE '^local-twin$'); fi
    (cd build && ctest --output-on-failure -j "$jobs" "${twins[@]}")
    summary+=("release: ok${twins:+ (local-twin suites left to the ASan stage)}") ;;
  asan)
    stage "ASan+UBSan build + ctest"
    configure build-asan -DCMAKE_BUILD_TYPE=Debug -DPO_SANITIZE=ON -DPO_ALLOCATOR=libc
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       ctest --output-on-failure -j "$jobs" -LE '^no-asan$')
    summary+=("asan: ok") ;;
  valgrind)
    stage "valgrind"
    configure build -DCMAKE_BUILD_TYPE=Release -DPO_ALLOCATOR=
    (cd build && ctest --output-on-failure -L '^valgrind$' -T memcheck --overwrite MemoryCheckCommand=/usr/bin/valgrind \
       --overwrite MemoryCheckCommandOptions="--leak-check=full --error-exitcode=99 --errors-for-leak-kinds=definite" \
       -j "$jobs") || { echo "valgrind found errors"; exit 1; }
    summary+=("valgrind: ok") ;;
  fuzz)
    stage "fuzz (bounded)"
    CC=clang configure build-fuzz -DCMAKE_BUILD_TYPE=Debug -DPO_FUZZ=ON -DCMAKE_C_COMPILER=clang -DPO_ALLOCATOR=libc
    secs=${PO_FUZZ_SECONDS:-15}
    n=0
    for f in build-fuzz/tests/fuzz/fuzz_*; do
      [ -x "$f" ] || continue
      name=$(basename "$f")
      corpus="tests/fuzz/corpus/${name#fuzz_}"
      work=$(mktemp -d)
      [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
      echo "fuzz: $name for ${secs}s"
      PO_FUZZ_STRICT=1 "$f" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 "$work" \
        >"$work.log" 2>&1 || { tail -50 "$work.log"; echo "fuzz: $name failed"; exit 1; }
      rm -rf "$work" "$work.log"
      n=$((n+1))
    done
    summary+=("fuzz: $n targets x ${secs}s ok") ;;
  *) echo "unknown stage $s"; exit 2 ;;
  esac
done
stage "summary"
printf '%s\n' "${summary[@]}"
