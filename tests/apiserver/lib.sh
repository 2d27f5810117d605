# Shared helpers for the po-apiserver shell tests. Source after setting APISERVER (and HOOK).
# Everything lives in a temporary directory removed at exit; processes started here are
# stopped by their pid at exit. No timed assertions: waits are bounded polls.
set -euo pipefail
T=$(mktemp -d "${TMPDIR:-/tmp}/po-apiserver-test.XXXXXX")
PIDS=()
export HOME="$T/home"
mkdir -p "$HOME"
TESTDATA="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/testdata"

cleanup() {
  local p
  for p in "${PIDS[@]}"; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  for f in "$T"/*.log; do [ -f "$f" ] && { echo "--- $f (tail)" >&2; tail -20 "$f" >&2; }; done
  exit 1
}
pass() { echo "ok: $*"; }

# wait_file FILE: poll up to 20 s (this is a bound, not a timed assertion)
wait_file() {
  local i
  for i in $(seq 1 400); do
    [ -s "$1" ] && return 0
    sleep 0.05
  done
  fail "timed out waiting for $1"
}

# start_server NAME [flags...]: sets URL and SERVER_PID
start_server() {
  local name=$1
  shift
  rm -f "$T/$name.ready"
  "$APISERVER" --listen 127.0.0.1:0 --ready-file "$T/$name.ready" --kubeconfig "$T/$name.kubeconfig" "$@" \
    2>>"$T/$name.log" &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  wait_file "$T/$name.ready"
  URL=$(cat "$T/$name.ready")
  export KUBECONFIG="$T/$name.kubeconfig"
}

stop_server() {
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID" || fail "server exited with $? on SIGTERM"
}

k() { kubectl --cache-dir "$T/kcache" "$@"; }

# http METHOD PATH [BODY] [CONTENT-TYPE] [extra curl args...]: sets CODE, BODY, HEADERS
CURL_AUTH=()
http() {
  local method=$1 path=$2 data=${3-} ct=${4:-application/json}
  shift $(( $# < 4 ? $# : 4 ))
  local args=(-sS -X "$method" -o "$T/body" -D "$T/headers" -w '%{http_code}' "${CURL_AUTH[@]}" "$@")
  if [ -n "$data" ]; then args+=(-H "Content-Type: $ct" --data-binary "$data"); fi
  CODE=$(curl "${args[@]}" "$URL$path") || fail "curl $method $path failed"
  BODY=$(cat "$T/body")
  HEADERS=$(cat "$T/headers")
}

expect_code() {
  [ "$CODE" = "$1" ] || fail "$2: expected HTTP $1, got $CODE: $BODY"
}

expect_eq() {
  [ "$1" = "$2" ] || fail "$3: expected [$2], got [$1]"
}

jbody() { jq -r "$1" <<<"$BODY"; }
