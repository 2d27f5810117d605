#!/usr/bin/env bash
# kube_meta_answer_real: test_kube_meta_answer against the real kube-apiserver and etcd, which
# answer a write as a PartialObjectMetadata when asked (the local API server answers the object
# whole). Skipped (77) without them, a failure under PO_REQUIRE_REAL=1 (CI).
#   t_meta_answer_real.sh BUILD_DIR
set -u
. "$(dirname "$0")/../../scripts/lib/real-cluster.sh"
lc_have_real || lc_real_missing
build=$(cd "$1" && pwd)
work=$(mktemp -d /tmp/po-metaanswer.XXXXXX)
trap 'lc_stop; rm -rf "$work"' EXIT
lc_start "$build" "$work/cluster" >"$work/start.log" 2>&1 || { cat "$work/start.log"; exit 1; }
# 24 KB of data: about a 50-entry ServiceDefaults' size
head -c 18000 /dev/urandom | base64 -w0 >"$work/big"
kubectl create configmap answer --from-file=big="$work/big" >/dev/null || exit 1
"$build/tests/kube/test_kube_meta_answer"
