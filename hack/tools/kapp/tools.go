//go:build tools

// Package tools pins kapp (v0.64.2), used only by `make bench` as a
// reference deployer measured beside snapply.
package tools

import _ "carvel.dev/kapp/cmd/kapp"
