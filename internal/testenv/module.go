package testenv

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ModuleDir returns the directory of a Go module (path@version, an exact
// version) in the module cache, downloading it with `go mod download` when
// needed: the real-world tests read charts, kustomize trees and CRDs that
// public projects publish in their Go modules. It skips the test, with the
// reason, when the module is not available (no module proxy and not in the
// cache).
func ModuleDir(t testing.TB, module string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if err != nil || json.Unmarshal(out, &info) != nil || info.Dir == "" {
		t.Skipf("module %s is not available (go mod download: %v %s): the real-world tests need the module proxy or the module cache", module, err, info.Error)
	}
	return info.Dir
}

// CopyTree copies the regular files under src into dst, keeping their
// relative paths, writable (the module cache is read-only).
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
