#!/usr/bin/env bash
# Builds envoy-validate into $1 (scripts/build-oracles.sh runs this with GOFLAGS=-mod=readonly:
# every module checked against go.sum and the checksum database).
set -euo pipefail
out=$1
go build -o "$out/envoy-validate" .
