//go:build tools

// Package tools pins actionlint, which `make lint` runs over the workflows
// (hack/tools.sh lint builds it).
package tools

import _ "github.com/rhysd/actionlint/cmd/actionlint"
