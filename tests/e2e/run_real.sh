#!/usr/bin/env bash
# ctest's e2e_*_real: runs one suite on the real kube-apiserver and etcd, or reports it skipped
# (exit 77) when scripts/build-kube.sh has not built them (PO_SKIP_KUBE=1, no Go module proxy);
# a failure instead under PO_REQUIRE_REAL=1, as in CI.
#   run_real.sh SUITE.sh BUILD_DIR
. "$(dirname "$0")/../../scripts/lib/real-cluster.sh"
lc_have_real || lc_real_missing
PO_APISERVER=real exec bash "$1" "$2"
