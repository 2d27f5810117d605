#!/usr/bin/env bash
# Builds gofmt into $1: Go's standard library only (fmt's %v of a float64, strings.EqualFold).
set -euo pipefail
go build -o "$1/gofmt" .
