//go:build tools

// Package tools pins helm (v4.2.4, the Helm SDK snapply renders charts
// with), used only by tests that compare snapply's rendering of real charts
// with `helm template`.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
