// Package version holds the version of the snapply binary. `make build` sets
// both variables with the linker:
//
//	go build -ldflags "-X github.com/snapply/snapply/internal/version.Version=$(git describe --tags --always --dirty) -X github.com/snapply/snapply/internal/version.Commit=$(git rev-parse HEAD)"
package version

// Version is the release the binary was built from, as `git describe --tags
// --always --dirty` names it; "dev" for a build without the linker flags.
var Version = "dev"

// Commit is the git commit the binary was built from, or "unknown".
var Commit = "unknown"
