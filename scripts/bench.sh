#!/usr/bin/env bash
# make bench: every benchmark program that the build produced, one after another. They print
# numbers (docs/benchmarks.md says what each means); none of them passes or fails on speed.
#   scripts/bench.sh [BUILD_DIR]      (default build/, a Release build: `make` makes it)
# Extra arguments for bench_engine go in PO_BENCH_ARGS, e.g. PO_BENCH_ARGS="--only e2e".
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${1:-build}
if [ -f "$build/CMakeCache.txt" ] && ! grep -q '^CMAKE_BUILD_TYPE:STRING=Release' "$build/CMakeCache.txt"; then
  echo "bench: note: $build is not a Release build; numbers will be slow" >&2
fi
ran=0
run() { # program [args...]
  local prog=$1; shift
  [ -x "$prog" ] || return 0
  printf '\n=== %s ===\n' "${prog#"$build"/}"
  "$prog" "$@"
  ran=$((ran + 1))
}
# shellcheck disable=SC2086
run "$build/tests/bench/bench_engine" ${PO_BENCH_ARGS:-}
run "$build/tests/bench/bench_denial"
run "$build/tests/bench/bench_idle"
run "$build/tests/kube/bench_informer"
run "$build/tests/runtime/bench_workqueue"
if [ -x "$build/tests/e2e/bench_webhook" ]; then
  certs=$(mktemp -d)
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$certs/key.pem" \
    -out "$certs/cert.pem" -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
  run "$build/tests/e2e/bench_webhook" "$certs/cert.pem" "$certs/key.pem" "$certs/cert.pem" 5 2
  rm -rf "$certs"
fi
if [ -x "$build/tests/apiserver/po-apiserver" ] && [ -x "$build/propertyoverride" ]; then
  # On the real kube-apiserver when scripts/build-kube.sh built it, else on the local server
  # (PO_BENCH_SERVER chooses); the sweep in docs/benchmarks.md takes longer: make bench-controller.
  server=${PO_BENCH_SERVER:-$([ -x .deps/bin/kube-apiserver ] && echo real || echo local)}
  printf '\n=== controller: %s PropertyOverrides to convergence (%s server) ===\n' "${PO_BENCH_OVERRIDES:-10000}" "$server"
  bash tests/e2e/bench_controller.sh "$build" --server "$server" --points "${PO_BENCH_OVERRIDES:-10000}" --capped none
  ran=$((ran + 1))
fi
if [ -x "$build/propertyoverride" ]; then
  printf '\n=== propertyoverride: one-shot commands and big Lists (tests/bench/bench_cli.sh) ===\n'
  bash tests/bench/bench_cli.sh "$build" "${PO_BENCH_LIST_ITEMS:-200000}"
  printf '\n=== propertyoverride preview: a %s-cluster config dump (tests/bench/bench_preview.sh) ===\n' "${PO_BENCH_PREVIEW_CLUSTERS:-10000}"
  bash tests/bench/bench_preview.sh "$build" "${PO_BENCH_PREVIEW_CLUSTERS:-10000}"
  ran=$((ran + 1))
fi
if [ "$ran" = 0 ]; then
  echo "bench: no benchmark programs in $build (build it first: make)" >&2
  exit 1
fi
