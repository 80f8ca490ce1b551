//go:build tools

// Package tools pins the etcd server that snapply's tests run (v3.6.6).
package tools

import _ "go.etcd.io/etcd/server/v3"
