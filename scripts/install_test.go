// Package scripts_test tests scripts/install.sh, the action's install
// step, against a local server that serves release assets the way GitHub
// releases do.
package scripts_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const asset = "snapply_linux_amd64"

// releaseServer serves release v1.2.3: the asset and a checksums file that
// lists sum for it.
func releaseServer(t *testing.T, body []byte, sum string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/v1.2.3/"+asset, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) })
	mux.HandleFunc("/v1.2.3/checksums.txt", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "%s  snapply_darwin_arm64\n%s  %s\n", strings.Repeat("0", 64), sum, asset)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// install runs the script with env, as the action's step does.
func install(t *testing.T, env map[string]string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	cmd := exec.Command("bash", "install.sh")
	cmd.Env = append(os.Environ(), "RUNNER_OS=Linux", "RUNNER_ARCH=X64")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestInstallRelease(t *testing.T) {
	body := []byte("#!/bin/sh\necho snapply-release\n")
	h := sha256.Sum256(body)
	s := releaseServer(t, body, hex.EncodeToString(h[:]))
	cache, path := t.TempDir(), filepath.Join(t.TempDir(), "github_path")
	out, err := install(t, map[string]string{"SNAPPLY_REF": "v1.2.3", "SNAPPLY_RELEASE_URL": s.URL, "RUNNER_TOOL_CACHE": cache, "GITHUB_PATH": path})
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	bin := filepath.Join(cache, "snapply", "v1.2.3", "linux_amd64", "snapply")
	got, err := os.ReadFile(bin)
	if err != nil || string(got) != string(body) {
		t.Fatalf("installed binary %q (%v), want the release asset", got, err)
	}
	if fi, _ := os.Stat(bin); fi.Mode()&0o111 == 0 {
		t.Errorf("binary is not executable: %v", fi.Mode())
	}
	if p, _ := os.ReadFile(path); strings.TrimSpace(string(p)) != filepath.Dir(bin) {
		t.Errorf("GITHUB_PATH = %q, want %s", p, filepath.Dir(bin))
	}
	// A second job on the same runner uses the tool cache.
	s.Close()
	if out, err := install(t, map[string]string{"SNAPPLY_REF": "v1.2.3", "SNAPPLY_RELEASE_URL": s.URL, "RUNNER_TOOL_CACHE": cache}); err != nil || !strings.Contains(out, "tool cache") {
		t.Errorf("cached install: %v\n%s", err, out)
	}
}

func TestInstallChecksumMismatchFails(t *testing.T) {
	s := releaseServer(t, []byte("tampered"), strings.Repeat("ab", 32))
	cache := t.TempDir()
	out, err := install(t, map[string]string{"SNAPPLY_REF": "v1.2.3", "SNAPPLY_RELEASE_URL": s.URL, "RUNNER_TOOL_CACHE": cache})
	if err == nil {
		t.Fatalf("install succeeded with a wrong checksum:\n%s", out)
	}
	if !strings.Contains(out, "checksum mismatch for "+asset+" of release v1.2.3") || !strings.Contains(out, "refusing to install") {
		t.Errorf("error does not say why:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(cache, "snapply", "v1.2.3", "linux_amd64", "snapply")); err == nil {
		t.Error("the tampered binary was installed")
	}
}

func TestInstallUnlistedAssetFails(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1.2.3/"+asset, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("x")) })
	mux.HandleFunc("/v1.2.3/checksums.txt", func(w http.ResponseWriter, _ *http.Request) {})
	s := httptest.NewServer(mux)
	defer s.Close()
	out, err := install(t, map[string]string{"SNAPPLY_REF": "v1.2.3", "SNAPPLY_RELEASE_URL": s.URL, "RUNNER_TOOL_CACHE": t.TempDir()})
	if err == nil || !strings.Contains(out, "not listed in the checksums") {
		t.Errorf("install of an unlisted asset: %v\n%s", err, out)
	}
}

// Any other ref builds from the action's own source.
func TestInstallNonReleaseRefBuildsFromSource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds snapply")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the test runner pretends to be a Linux runner")
	}
	src, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	out, err := install(t, map[string]string{"SNAPPLY_REF": "main", "SNAPPLY_ACTION_PATH": src, "RUNNER_TEMP": tmp, "SNAPPLY_RELEASE_URL": "http://127.0.0.1:1"})
	if err != nil {
		t.Fatalf("build from source: %v\n%s", err, out)
	}
	bin := filepath.Join(tmp, "snapply-bin", "snapply")
	v, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(v), "main") {
		t.Errorf("built binary: `snapply version` = %q (%v), want version main", v, err)
	}
}
