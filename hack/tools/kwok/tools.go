//go:build tools

// Package tools pins kwok (v0.7.0), which fakes kubelets so that Pods in the
// local test cluster turn Running without a container runtime.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
