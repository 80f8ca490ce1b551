// Package version holds the version of the snapply binary. `make build` and
// the release set both variables with the linker:
//
//	go build -ldflags "-X github.com/snapply/snapply/internal/version.Version=$(git describe --tags --always --dirty) -X github.com/snapply/snapply/internal/version.Commit=$(git rev-parse HEAD)"
//
// A binary built without them takes what its build information holds:
//
//   - `go install github.com/snapply/snapply/cmd/snapply@v1.2.3` builds from
//     the module cache, not a git checkout: Version is the module version
//     (a pseudo-version such as v0.0.0-20260101120000-abcdef123456 for an
//     untagged commit), and Commit stays "unknown", because Go records the
//     VCS revision only when it builds inside a checkout;
//   - `go build ./cmd/snapply` in a git checkout: Commit is the revision Go
//     stamps in (with "-dirty" when the tree has changes), and Version the
//     version Go derives from the checkout (its tag, else a pseudo-version).
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is the release the binary was built from, as `git describe --tags
// --always --dirty` names it; else the module version of a `go install`;
// "dev" when neither is known.
var Version = "dev"

// Commit is the git commit the binary was built from, or "unknown".
var Commit = "unknown"

func init() {
	bi, _ := debug.ReadBuildInfo()
	Version, Commit = resolve(Version, Commit, bi)
}

// resolve fills in a version and commit the linker did not set from the
// build information, when it has them.
func resolve(version, commit string, bi *debug.BuildInfo) (string, string) {
	if bi == nil {
		return version, commit
	}
	if version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		version = bi.Main.Version
	}
	if commit == "unknown" {
		var rev string
		var dirty bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			commit = rev
			if dirty {
				commit += "-dirty"
			}
		}
	}
	return version, commit
}

// Info describes a build: snapply's (Get), or the API server's.
type Info struct {
	// Version is the release ("v1.2.3"), as Version says.
	Version string `json:"version"`
	// Commit is the git commit it was built from.
	Commit string `json:"commit"`
	// GoVersion is the Go release that built it ("go1.26.0").
	GoVersion string `json:"goVersion"`
	// Platform is GOOS/GOARCH ("linux/amd64").
	Platform string `json:"platform"`
}

// Get returns the Info of this binary.
func Get() Info {
	return Info{Version: Version, Commit: Commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
}
