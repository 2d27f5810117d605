#!/usr/bin/env bash
# kube_http_version_real: test_kube_http_version against the real kube-apiserver and etcd, which
# offer HTTP/2 (the local API server does not). Skipped (77) without them, a failure under
# PO_REQUIRE_REAL=1 (CI).
#   t_http_version_real.sh BUILD_DIR
set -u
. "$(dirname "$0")/../../scripts/lib/real-cluster.sh"
lc_have_real || lc_real_missing
build=$(cd "$1" && pwd)
work=$(mktemp -d /tmp/po-httpver.XXXXXX)
trap 'lc_stop; rm -rf "$work"' EXIT
lc_start "$build" "$work/cluster" >"$work/start.log" 2>&1 || { cat "$work/start.log"; exit 1; }
kubectl create configmap http-version --from-literal=k=v >/dev/null || exit 1
"$build/tests/kube/test_kube_http_version"
