#!/usr/bin/env bash
# scripts/build-kube.sh's "already built" decision and the real harness's pin check, offline and
# cheap: a scratch PO_DEPS_DIR (the shared .deps is never touched) and a fake `go` first on PATH
# that records every call and cannot reach a module proxy, so "it tried to rebuild" is visible
# without building anything.
#  1. empty executables with a matching stamp are not taken as built (the script tries to rebuild)
#  2. the real binaries with a matching stamp: a no-op, go never called (needs .deps/bin built)
#  3. a stamp of other pins: the script tries to rebuild, fails offline with its message, and
#     lc_start refuses to run on the stale binaries, naming both versions
#  4. lc_free_port before lc_start (LC_WORK unset: t_deploy's webhook port) keeps its list in a file
#     of the test's own shell, not in one /tmp/.lc-ports shared by every run (lc_start carries it
#     into the work folder, so the servers it starts cannot take that port)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
s=$(mktemp -d /tmp/po-build-kube-test.XXXXXX)
trap 'rm -rf "$s"' EXIT
mkdir -p "$s/fakebin" "$s/deps/bin"
cat >"$s/fakebin/go" <<FAKE
#!/bin/sh
echo "go \$*" >>"$s/go.calls"
case "\$1" in
env) [ "\$2" = GOVERSION ] && echo go1.26.8 || echo off ;;
*) echo "go: module lookup disabled by GOPROXY=off" >&2; exit 1 ;;
esac
FAKE
chmod +x "$s/fakebin/go"
pins() { # the stamp build-kube.sh writes for this checkout: run it once against a scratch dir
  local kv ev sum src="$top/scripts/kube"
  kv=$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$src/apiserver/go.mod")
  ev=$(awk '$1=="require" && $2=="go.etcd.io/etcd/server/v3" {print $3}' "$src/etcd/go.mod")
  sum=$(cat "$src"/apiserver/go.mod "$src"/apiserver/tools.go "$src"/etcd/go.mod "$src"/etcd/main.go | sha256sum | cut -c1-16)
  echo "kube-apiserver $kv etcd $ev sources $sum"
}
run() { PATH="$s/fakebin:$PATH" PO_DEPS_DIR="$s/deps" bash "$top/scripts/build-kube.sh" >"$s/out" 2>&1; }

# 1.
: >"$s/deps/bin/kube-apiserver"; : >"$s/deps/bin/etcd"; chmod +x "$s/deps/bin/"*
pins >"$s/deps/bin/.kube-stamp"
rm -f "$s/go.calls"
if run; then bad "empty binaries with a matching stamp were taken as built"; else
  grep -q 'does not report Kubernetes' "$s/out" && ok "empty binaries: not taken as built (rebuild attempted)" ||
    { bad "empty binaries: no message saying why it rebuilds"; cat "$s/out"; }
fi

# 2.
if [ -x "$top/.deps/bin/kube-apiserver" ] && [ -x "$top/.deps/bin/etcd" ] && [ "$(cat "$top/.deps/bin/.kube-stamp" 2>/dev/null)" = "$(pins)" ]; then
  ln -sf "$top/.deps/bin/kube-apiserver" "$s/deps/bin/kube-apiserver"
  ln -sf "$top/.deps/bin/etcd" "$s/deps/bin/etcd"
  rm -f "$s/go.calls"
  if run && [ ! -s "$s/go.calls" ]; then ok "real binaries with a matching stamp: a no-op, go not called"
  else bad "real binaries with a matching stamp were rebuilt"; cat "$s/out" "$s/go.calls" 2>/dev/null; fi
else
  echo "note: .deps/bin has no kube-apiserver/etcd of these pins: case 2 not run"
fi

# 3.
echo "kube-apiserver v1.0.0 etcd v3.0.0 sources 0000000000000000" >"$s/deps/bin/.kube-stamp"
rm -f "$s/go.calls"
if run; then bad "a stamp of other pins was taken as built"; else
  grep -q 'cannot fetch k8s.io/kubernetes' "$s/out" && ok "other pins: rebuild attempted, fails offline with the proxy message" ||
    { bad "other pins: unexpected output"; cat "$s/out"; }
fi
out=$(PO_DEPS_DIR="$s/deps" bash -c '. "$1/scripts/lib/real-cluster.sh"; trap lc_stop EXIT; lc_start "$1/build" "$2/work"' _ "$top" "$s" 2>&1)
case "$out" in
*"holds 'kube-apiserver v1.0.0 etcd v3.0.0'"*"run scripts/build-kube.sh"*) ok "lc_start refuses stale binaries, naming both versions" ;;
*) bad "lc_start on stale binaries: $out" ;;
esac

# 4.
out=$(TMPDIR="$s" bash -c '. "$1/scripts/lib/real-cluster.sh"; unset LC_WORK; lc_free_port >/dev/null
  [ -s "$TMPDIR/.lc-ports.$$" ] && echo own-list; [ -e "$TMPDIR/.lc-ports" ] && echo shared-list' _ "$top" 2>&1)
equals_out="own-list"
[ "$out" = "$equals_out" ] && ok "lc_free_port before lc_start: this shell's own list, not a shared \$TMPDIR/.lc-ports" ||
  bad "lc_free_port before lc_start: got '$out', want '$equals_out'"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
