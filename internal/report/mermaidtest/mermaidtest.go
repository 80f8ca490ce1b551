// Package mermaidtest checks Mermaid diagrams with Mermaid's own parser,
// for tests: the pinned npm package in hack/mermaid, run by node with a
// jsdom window.
package mermaidtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Result is Mermaid's verdict on one diagram.
type Result struct {
	OK    bool   `json:"ok"`
	Type  string `json:"type"`
	Error string `json:"error"`
}

// Parse runs hack/mermaid/check.mjs on diagrams and returns Mermaid's
// verdict on each. The npm packages are installed once, with npm ci from
// the committed lock file, into a cache directory named by the lock file's
// hash (never into the tree). It skips the test, saying why, when node or
// npm is not installed.
func Parse(t testing.TB, diagrams []string) []Result {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: Mermaid's parser cannot run (CI installs nodejs and npm)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: Mermaid cannot be installed (CI installs nodejs and npm)")
	}
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate hack/mermaid")
	}
	src := filepath.Join(filepath.Dir(self), "..", "..", "..", "hack", "mermaid")
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "snapply", "mermaid-"+hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"package.json", "package-lock.json", "check.mjs"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "mermaid", "package.json")); err != nil {
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	in, _ := json.Marshal(diagrams)
	cmd := exec.Command(node, "check.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node check.mjs: %v\n%s", err, stderr.String())
	}
	var res []Result
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(diagrams) {
		t.Fatalf("check.mjs printed %q (%v)", out, err)
	}
	return res
}
