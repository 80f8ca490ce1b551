//go:build tools

// Package tools pins the Kubernetes control-plane binaries that snapply's
// tests, demo and benchmarks run: kube-apiserver, kube-controller-manager,
// kube-scheduler and kubectl, all at v1.36.3.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
