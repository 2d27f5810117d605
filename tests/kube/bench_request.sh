#!/usr/bin/env bash
# The kube client's CPU per request against the real kube-apiserver and etcd (numbers, not a
# test): bench_kube_request over HTTP/1.1 and HTTP/2, one thread and eight, then each once more
# under callgrind (instructions a request: the difference between two request counts, so the
# start and the TLS handshake fall out). docs/benchmarks.md has what it measured.
#   bash tests/kube/bench_request.sh BUILD [REQUESTS]   (default 3000 a run; callgrind runs 200 and 400)
set -u
. "$(dirname "$0")/../../scripts/lib/real-cluster.sh"
lc_have_real || lc_real_missing
build=$(cd "${1:?usage: bench_request.sh BUILD [REQUESTS]}" && pwd)
n=${2:-3000}
bin=$build/tests/kube/bench_kube_request
[ -x "$bin" ] || { echo "bench_request.sh: build $bin first (cmake --build $build --target bench_kube_request)" >&2; exit 2; }
work=$(mktemp -d /tmp/po-benchreq.XXXXXX)
trap 'lc_stop; rm -rf "$work"' EXIT
lc_start "$build" "$work/cluster" >"$work/start.log" 2>&1 || { cat "$work/start.log"; exit 1; }
for i in $(seq 0 7); do kubectl create configmap "bench-$i" --from-literal=k=v >/dev/null || exit 1; done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for v in http1 http2; do
  "$bin" 1 "$n" "$v" && "$bin" 8 $((n / 8)) "$v" || exit 1
done
if command -v valgrind >/dev/null; then
  for v in http1 http2; do
    for k in 200 400; do
      valgrind --tool=callgrind --callgrind-out-file="$work/cg.$v.$k" "$bin" 1 "$k" "$v" >/dev/null 2>"$work/cg.$v.$k.log" || exit 1
    done
    a=$(sed -n 's/^summary: //p' "$work/cg.$v.200") b=$(sed -n 's/^summary: //p' "$work/cg.$v.400")
    echo "$v: $(((b - a) / 200)) instructions a request (callgrind, 400 requests against 200)"
  done
fi
