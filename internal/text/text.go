// Package text holds string helpers that several packages share and that
// depend on nothing of snapply's own, so that any package may import it.
package text

import "strings"

// OneLine collapses every run of white space in s, new lines included,
// into one space, and trims both ends: an error of kustomize, YAML, an
// API server or a registry may span lines, and a message that names an
// object is one line.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
