#!/usr/bin/env bash
# Our webhook beside a controller-runtime one (docs/benchmarks.md, "Webhook beside
# controller-runtime"): the same AdmissionReview (tests/bench/crpeer/review.json, the
# PropertyOverride of bench_webhook: 4 patches) sent by the same load generator over TLS with
# keep-alive to
#   ours  tests/bench/crpeer/webhook_serve: the controller's webhook server and full admission
#         decision (schema walk, Consul's rules, Envoy's rules), as a process of its own
#   peer  tests/bench/crpeer/main.go: controller-runtime's webhook server and admission package
#         with a trivial decision (patches present, paths start with '/')
# in alternating rounds, and prints reviews/s, p50 and p99 for each round and the median.
# Numbers, not pass/fail: never run by ctest.
#   tests/bench/bench_crpeer.sh [BUILD_DIR] [seconds per round] [client threads] [rounds]
# The peer is built on first use into $PO_DEPS_DIR/crpeer-build (default .deps/), its modules
# fetched from the Go module proxy and verified against the Go checksum database; the pinned
# versions are in tests/bench/crpeer/go.mod.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
build=${1:-build}
secs=${2:-5}
threads=${3:-2}
rounds=${4:-3}
deps="${PO_DEPS_DIR:-$top/.deps}"
src=tests/bench/crpeer
die() { echo "bench_crpeer: $*" >&2; exit 1; }

for p in webhook_serve webhook_load; do
  [ -x "$build/tests/bench/crpeer/$p" ] || die "no $build/tests/bench/crpeer/$p: cmake --build $build --target $p"
done

# --- the peer --------------------------------------------------------------------------------------
peer="$deps/bin/crpeer"
sum=$(cat "$src/go.mod" "$src/main.go" | sha256sum | cut -c1-16)
if [ ! -x "$peer" ] || [ "$(cat "$deps/bin/.crpeer-stamp" 2>/dev/null)" != "$sum" ]; then
  command -v go >/dev/null || die "the peer needs the go command"
  dir="$deps/crpeer-build"
  echo "bench_crpeer: building the controller-runtime peer in $dir" >&2
  rm -rf "$dir"; mkdir -p "$dir" "$deps/bin"
  cp "$src/go.mod" "$src/main.go" "$dir/"
  (cd "$dir" && export GOFLAGS="-trimpath -buildvcs=false -mod=mod" CGO_ENABLED=0 &&
    go mod tidy && go build -o "$peer.tmp" .) >"$dir/build.log" 2>&1 ||
    { tail -20 "$dir/build.log" >&2; die "building the peer failed (is the Go module proxy reachable?); log: $dir/build.log"; }
  mv "$peer.tmp" "$peer"
  echo "$sum" >"$deps/bin/.crpeer-stamp"
fi

# --- one certificate for both ----------------------------------------------------------------------
work=$(mktemp -d /tmp/po-crpeer.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/tls.key" -out "$work/tls.crt" \
  -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null

wait_ready() { # file pid
  local i
  for ((i = 0; i < 400; i++)); do
    [ -s "$1" ] && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

"$build/tests/bench/crpeer/webhook_serve" "$work/tls.crt" "$work/tls.key" "$work/ours.addr" 2>"$work/ours.log" &
pids+=($!)
wait_ready "$work/ours.addr" $! || { cat "$work/ours.log" >&2; die "our webhook did not start"; }
"$peer" --cert-dir "$work" --ready-file "$work/peer.addr" 2>"$work/peer.log" &
pids+=($!)
wait_ready "$work/peer.addr" $! || { cat "$work/peer.log" >&2; die "the peer did not start"; }
ours="https://$(cat "$work/ours.addr")/validate"
theirs="https://$(cat "$work/peer.addr")/validate"

printf 'webhook beside controller-runtime (%s): %s s per round, %s client threads, %s rounds, %s CPUs\n' \
  "$(awk '$1=="sigs.k8s.io/controller-runtime"{print $2}' "$src/go.mod")" "$secs" "$threads" "$rounds" "$(nproc)"
run() { # name url
  local out
  out=$("$build/tests/bench/crpeer/webhook_load" "$2" "$work/tls.crt" "$src/review.json" "$secs" "$threads") ||
    { printf '%s\n' "$out" >&2; die "$1: the load generator reported errors"; }
  printf '%s %s %s\n' "$(awk '/reviews\/s/{print $2}' <<<"$out")" "$(awk '/p50/{print $2}' <<<"$out")" \
    "$(awk '/p99/{print $2}' <<<"$out")" >>"$work/$1.rows"
  printf '  %-5s %8s reviews/s   p50 %8s ms   p99 %8s ms\n' "$1" $(tail -1 "$work/$1.rows")
}
# warm both (TLS session setup, Go's first GC cycles, our schema load) before measuring
"$build/tests/bench/crpeer/webhook_load" "$ours" "$work/tls.crt" "$src/review.json" 1 1 >/dev/null
"$build/tests/bench/crpeer/webhook_load" "$theirs" "$work/tls.crt" "$src/review.json" 1 1 >/dev/null
for ((r = 1; r <= rounds; r++)); do
  echo "round $r"
  run ours "$ours"
  run peer "$theirs"
done
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
echo "median over $rounds rounds"
for n in ours peer; do
  printf '  %-5s %8s reviews/s   p50 %8s ms   p99 %8s ms\n' "$n" \
    "$(cut -d' ' -f1 "$work/$n.rows" | median)" "$(cut -d' ' -f2 "$work/$n.rows" | median)" "$(cut -d' ' -f3 "$work/$n.rows" | median)"
done
