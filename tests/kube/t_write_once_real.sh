#!/usr/bin/env bash
# kube_write_once_real: test_kube_write_once's create on the real kube-apiserver and etcd, through
# drop_answer_proxy.py, which swallows the answer to a write on a kept-alive connection: the
# ConfigMap is created once (generateName: a second send would make a second one), over HTTP/1.1
# and HTTP/2; and, meanwhile, a PATCH after 95 s of quiet (kube-apiserver closes a connection idle
# for 90 s): it succeeds on a new connection. Skipped (77) without the real server, a failure under
# PO_REQUIRE_REAL=1 (CI).
#   t_write_once_real.sh BUILD_DIR
set -u
. "$(dirname "$0")/../../scripts/lib/real-cluster.sh"
lc_have_real || lc_real_missing
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/po-writeonce.XXXXXX)
proxy=
trap '[ -n "$proxy" ] && kill $proxy 2>/dev/null; lc_stop; rm -rf "$work"' EXIT
lc_start "$build" "$work/cluster" >"$work/start.log" 2>&1 || { cat "$work/start.log"; exit 1; }
kubectl create configmap write-once-idle --from-literal=k=v >/dev/null || exit 1
"$build/tests/kube/test_kube_write_once" idle 95 &
idle=$!
port=$(lc_free_port)
/usr/bin/python3 "$here/drop_answer_proxy.py" "$port" "${LC_URL##*:}" "$work/arm" >"$work/proxy.log" 2>&1 &
proxy=$!
sed "s#$LC_URL#https://127.0.0.1:$port#" "$KUBECONFIG" >"$work/kubeconfig"
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
KUBECONFIG="$work/kubeconfig" "$build/tests/kube/test_kube_write_once" real "$work/arm"
rc=$?
cat "$work/proxy.log"
wait $idle || rc=1
exit $rc
