//go:build tools

// Package tools names the one command this module exists to build, so that `go mod tidy` keeps
// its requirements. scripts/build-kube.sh builds it with
// `go build k8s.io/kubernetes/cmd/kube-apiserver`.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
