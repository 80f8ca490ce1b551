// Package version holds the version of snapply, set at build time with
// -ldflags "-X github.com/snapply/snapply/internal/version.Version=...".
package version

// Version is the release of snapply, or "dev" for a build from source.
var Version = "dev"

// Commit is the git commit snapply was built from, when known.
var Commit = "unknown"
