#!/usr/bin/env bash
# ctest's e2e_*_real: runs one suite on the real kube-apiserver and etcd, or reports it skipped
# (exit 77) when scripts/build-kube.sh has not built them (PO_SKIP_KUBE=1, no Go module proxy).
#   run_real.sh SUITE.sh BUILD_DIR
. "$(dirname "$0")/../../scripts/lib/real-cluster.sh"
if ! lc_have_real; then
  echo "skipped: no kube-apiserver and etcd in $(lc_real_bin) (scripts/build-kube.sh builds them)"
  exit 77
fi
PO_APISERVER=real exec bash "$1" "$2"
