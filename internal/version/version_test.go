package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	installed := &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}}}
	devel := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "def456"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		name                 string
		version, commit      string
		bi                   *debug.BuildInfo
		wantVersion, wantCom string
	}{
		{"linker flags win", "v1.2.3", "0123abcd", installed, "v1.2.3", "0123abcd"},
		{"go install of a release", "dev", "unknown", installed, "v1.4.0", "abc123"},
		{"a build in a checkout", "dev", "unknown", devel, "dev", "def456-dirty"},
		{"no build information", "dev", "unknown", nil, "dev", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, c := resolve(tc.version, tc.commit, tc.bi)
			if v != tc.wantVersion || c != tc.wantCom {
				t.Errorf("resolve = %q, %q; want %q, %q", v, c, tc.wantVersion, tc.wantCom)
			}
		})
	}
}
