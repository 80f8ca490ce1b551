package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fakeBinaries makes a directory holding executables of the given names.
func fakeBinaries(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestAssets(t *testing.T) {
	both := fakeBinaries(t, "etcd", "kube-apiserver")
	onlyEtcd := fakeBinaries(t, "etcd")
	home := t.TempDir()
	homeTools := filepath.Join(home, ".cache", "snapply", "tools", toolsVersions)
	xdg := t.TempDir()
	xdgTools := filepath.Join(xdg, "snapply", "tools", toolsVersions)
	for _, d := range []string{homeTools, xdgTools} {
		for _, name := range []string{"etcd", "kube-apiserver"} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, name), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{"KUBEBUILDER_ASSETS wins", map[string]string{"KUBEBUILDER_ASSETS": both, "SNAPPLY_TOOLS_DIR": onlyEtcd, "HOME": home}, both, false},
		{"SNAPPLY_TOOLS_DIR", map[string]string{"SNAPPLY_TOOLS_DIR": both, "HOME": home}, both, false},
		{"XDG_CACHE_HOME", map[string]string{"XDG_CACHE_HOME": xdg, "HOME": home}, xdgTools, false},
		{"HOME", map[string]string{"HOME": home}, homeTools, false},
		{"incomplete KUBEBUILDER_ASSETS falls back like hack/tools.sh", map[string]string{"KUBEBUILDER_ASSETS": onlyEtcd, "HOME": home}, homeTools, false},
		{"missing kube-apiserver", map[string]string{"SNAPPLY_TOOLS_DIR": onlyEtcd}, "", true},
		{"nothing set", map[string]string{}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := assets(func(k string) string { return tt.env[k] })
			if (err != nil) != tt.wantErr {
				t.Fatalf("assets() error = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("assets() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStartSaysHowToBuildMissingBinaries(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", "")
	t.Setenv("SNAPPLY_TOOLS_DIR", t.TempDir())
	_, err := Start(t.Context(), DefaultOptions())
	if !errors.Is(err, errNoAssets) {
		t.Fatalf("Start() error = %v, want one that says how to build the binaries", err)
	}
}

func TestStartWithControllersNeedsTheirBinaries(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", fakeBinaries(t, "etcd", "kube-apiserver"))
	t.Setenv("SNAPPLY_TOOLS_DIR", t.TempDir())
	_, err := Start(t.Context(), Options{Controllers: true})
	if err == nil || !strings.Contains(err.Error(), "kube-controller-manager") {
		t.Fatalf("Start() with controllers error = %v, want one naming kube-controller-manager", err)
	}
}

// TestToolsDirInSync checks that toolsVersions names the directory
// hack/tools.sh builds into.
func TestToolsDirInSync(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "hack", "tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^versions="([^"]+)"`).FindSubmatch(script)
	if m == nil {
		t.Fatal(`hack/tools.sh: no versions="..." line`)
	}
	if got := string(m[1]); got != toolsVersions {
		t.Errorf("hack/tools.sh builds into %q, testenv looks in %q: keep them in sync", got, toolsVersions)
	}
	if !regexp.MustCompile(`(?m)^dir=\$\{SNAPPLY_TOOLS_DIR:-\$\{XDG_CACHE_HOME:-\$HOME/\.cache\}/snapply/tools/\$versions\}$`).Match(script) {
		t.Error("hack/tools.sh: the dir= line changed: update toolsDir to match")
	}
}
