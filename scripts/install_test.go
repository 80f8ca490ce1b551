// Package scripts_test tests scripts/install.sh, the action's install
// step, against a local server that serves release assets the way GitHub
// releases do.
package scripts_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// install runs the script with env and args, as the action's steps do.
func install(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	cmd := exec.Command("bash", append([]string{"install.sh"}, args...)...)
	// Not the variables of a runner the tests may run on (its GITHUB_PATH,
	// GITHUB_OUTPUT, GITHUB_TOKEN): only what the test gives.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GITHUB_") && !strings.HasPrefix(kv, "RUNNER_") && !strings.HasPrefix(kv, "SNAPPLY_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "RUNNER_OS=Linux", "RUNNER_ARCH=X64")
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

// release is one entry of the releases API, in the order of GitHub's
// fields, with the nested objects a real answer has.
type release struct {
	URL    string `json:"url"`
	ID     int    `json:"id"`
	Author struct {
		Login string `json:"login"`
	} `json:"author"`
	TagName    string `json:"tag_name"`
	Name       string `json:"name"`
	Draft      bool   `json:"draft"`
	Prerelease bool   `json:"prerelease"`
	Assets     []struct {
		Name string `json:"name"`
	} `json:"assets"`
	Body string `json:"body"`
}

// releasesServer serves the releases API of snapply/snapply (paged as
// GitHub pages it: per_page, page) and, under /download, the assets of
// every release in assets, with checksums.txt listing sums[tag]. auth
// records the Authorization headers the API received.
type releasesServer struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

// calls returns the Authorization headers of the API calls so far.
func (rs *releasesServer) calls() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.auth)
}

func newReleasesServer(t *testing.T, list []release, assets map[string][]byte, sums map[string]string) *releasesServer {
	t.Helper()
	rs := &releasesServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/snapply/snapply/releases", func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.auth = append(rs.auth, r.Header.Get("Authorization"))
		rs.mu.Unlock()
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if per <= 0 {
			per = 30
		}
		if page <= 0 {
			page = 1
		}
		lo, hi := min((page-1)*per, len(list)), min(page*per, len(list))
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(list[lo:hi])
	})
	for tag, body := range assets {
		mux.HandleFunc("/download/"+tag+"/"+asset, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) })
		mux.HandleFunc("/download/"+tag+"/checksums.txt", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "%s  %s\n", sums[tag], asset)
		})
	}
	rs.Server = httptest.NewServer(mux)
	t.Cleanup(rs.Close)
	return rs
}

// published is the release list of the tests: 100 old v0 releases first
// (so that v1 is on the second page), then v1 releases among which the
// newest published are v1.10.0 (numerically above v1.9.1) and v1.9.1; a
// newer pre-release, a newer draft and a pre-release flagged only by the
// API are not published releases; v2.0.0 is another major.
func published() []release {
	var list []release
	rel := func(tag string, draft, pre bool) {
		r := release{URL: "https://api.github.com/repos/snapply/snapply/releases/" + tag, ID: len(list) + 1, TagName: tag, Name: tag, Draft: draft, Prerelease: pre}
		r.Author.Login = "releaser"
		r.Assets = append(r.Assets, struct {
			Name string `json:"name"`
		}{asset})
		// Release notes that quote the API do not fool the parser.
		r.Body = `Changes. "tag_name": "v9.9.9", "draft": false, "prerelease": false`
		list = append(list, r)
	}
	for i := range 100 {
		rel(fmt.Sprintf("v0.1.%d", i), false, false)
	}
	rel("v2.0.0", false, false)
	rel("v1.11.0-rc.1", false, true)
	rel("v1.12.0", true, false)
	rel("v1.13.0", false, true)
	rel("v1.10.0", false, false)
	rel("v1.9.1", false, false)
	rel("v1.9.0", false, false)
	rel("v1.2.3", false, false)
	return list
}

// fakeSource is a module that builds a `snapply` printing its version, in
// place of the action's source: what a build from source installs.
func fakeSource(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":                      "module github.com/snapply/snapply\n\ngo 1.21\n",
		"internal/version/version.go": "package version\n\n// Version is stamped by the build.\nvar Version = \"unset\"\n",
		"cmd/snapply/main.go":         "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/snapply/snapply/internal/version\"\n)\n\nfunc main() { fmt.Println(\"built from source\", version.Version) }\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// A major tag (uses: snapply/snapply@v1) installs the newest published
// v1.x.y release and checks it against that release's checksums; a minor
// tag (v1.9) the newest v1.9.z. The token goes to the API, never to the log.
func TestInstallMajorAndMinorTagsInstallTheNewestRelease(t *testing.T) {
	const token = "ghs_install-test-token-0123456789"
	assets := map[string][]byte{"v1.10.0": []byte("#!/bin/sh\necho v1.10.0\n"), "v1.9.1": []byte("#!/bin/sh\necho v1.9.1\n")}
	sums := map[string]string{"v1.10.0": sum(assets["v1.10.0"]), "v1.9.1": sum(assets["v1.9.1"])}
	s := newReleasesServer(t, published(), assets, sums)
	for _, tc := range []struct{ ref, want string }{{"v1", "v1.10.0"}, {"v1.9", "v1.9.1"}} {
		t.Run(tc.ref, func(t *testing.T) {
			cache, path := t.TempDir(), filepath.Join(t.TempDir(), "github_path")
			out, err := install(t, map[string]string{
				"SNAPPLY_REF": tc.ref, "SNAPPLY_REPOSITORY": "snapply/snapply", "GITHUB_API_URL": s.URL, "GITHUB_TOKEN": token,
				"SNAPPLY_RELEASE_URL": s.URL + "/download", "RUNNER_TOOL_CACHE": cache, "GITHUB_PATH": path,
			})
			if err != nil {
				t.Fatalf("install: %v\n%s", err, out)
			}
			bin := filepath.Join(cache, "snapply", tc.want, "linux_amd64", "snapply")
			if got, err := os.ReadFile(bin); err != nil || string(got) != string(assets[tc.want]) {
				t.Fatalf("installed %q (%v), want the asset of %s\n%s", got, err, tc.want, out)
			}
			for _, want := range []string{"snapply " + tc.ref + " is release " + tc.want, "installed snapply " + tc.want + " (linux/amd64), sha256 " + sums[tc.want]} {
				if !strings.Contains(out, want) {
					t.Errorf("the log lacks %q:\n%s", want, out)
				}
			}
			if p, _ := os.ReadFile(path); strings.TrimSpace(string(p)) != filepath.Dir(bin) {
				t.Errorf("GITHUB_PATH = %q, want %s", p, filepath.Dir(bin))
			}
			if strings.Contains(out, token) {
				t.Errorf("the log holds the token:\n%s", out)
			}
		})
	}
	if calls := s.calls(); len(calls) != 4 || calls[0] != "Bearer "+token {
		t.Errorf("the releases API got Authorization %q, want the token, twice for each tag (two pages)", calls)
	}

	// The resolve step tells the action to skip setup-go.
	out := filepath.Join(t.TempDir(), "output")
	if log, err := install(t, map[string]string{"SNAPPLY_REF": "v1", "GITHUB_API_URL": s.URL, "GITHUB_OUTPUT": out}, "resolve"); err != nil {
		t.Fatalf("resolve: %v\n%s", err, log)
	}
	if got, _ := os.ReadFile(out); string(got) != "tag=v1.10.0\nbuild=false\n" {
		t.Errorf("resolve wrote %q, want tag=v1.10.0 and build=false", got)
	}
}

// The newest release of a major tag is checked like any release: a
// mismatch fails, and does not fall back to a build.
func TestInstallMajorTagChecksumMismatchFails(t *testing.T) {
	s := newReleasesServer(t, published(), map[string][]byte{"v1.10.0": []byte("tampered")}, map[string]string{"v1.10.0": strings.Repeat("ab", 32)})
	cache := t.TempDir()
	out, err := install(t, map[string]string{
		"SNAPPLY_REF": "v1", "GITHUB_API_URL": s.URL, "SNAPPLY_RELEASE_URL": s.URL + "/download",
		"RUNNER_TOOL_CACHE": cache, "SNAPPLY_ACTION_PATH": fakeSource(t),
	})
	if err == nil || !strings.Contains(out, "checksum mismatch for "+asset+" of release v1.10.0") || strings.Contains(out, "building") {
		t.Errorf("install of a tampered v1.10.0: %v, want a checksum error and no build\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(cache, "snapply", "v1.10.0", "linux_amd64", "snapply")); err == nil {
		t.Error("the tampered binary was installed")
	}
}

// A major tag that no published release covers, or whose releases cannot
// be listed, builds from the action's source, with a notice saying why.
func TestInstallMajorTagWithoutReleaseBuildsFromSource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not found")
	}
	s := newReleasesServer(t, published(), nil, nil)
	src := fakeSource(t)
	for _, tc := range []struct{ name, ref, api, notice string }{
		{"no release covers it", "v3", s.URL, "::notice title=snapply install::no published release of snapply/snapply matches v3: building snapply v3 from source instead"},
		{"no minor release", "v1.5", s.URL, "no published release of snapply/snapply matches v1.5"},
		{"API unreachable", "v1", "http://127.0.0.1:1", "::notice title=snapply install::cannot list the releases of snapply/snapply ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp, outputs := t.TempDir(), filepath.Join(t.TempDir(), "output")
			env := map[string]string{"SNAPPLY_REF": tc.ref, "GITHUB_API_URL": tc.api, "SNAPPLY_ACTION_PATH": src, "RUNNER_TEMP": tmp, "GITHUB_OUTPUT": outputs}
			log, err := install(t, env, "resolve")
			if got, _ := os.ReadFile(outputs); err != nil || string(got) != "tag=\nbuild=true\n" {
				t.Errorf("resolve: %v, wrote %q, want build=true\n%s", err, got, log)
			}
			out, err := install(t, env)
			if err != nil {
				t.Fatalf("install: %v\n%s", err, out)
			}
			if !strings.Contains(out, tc.notice) {
				t.Errorf("no notice saying %q:\n%s", tc.notice, out)
			}
			v, err := exec.Command(filepath.Join(tmp, "snapply-bin", "snapply")).CombinedOutput()
			if err != nil || strings.TrimSpace(string(v)) != "built from source "+tc.ref {
				t.Errorf("the installed binary says %q (%v), want a build of %s", v, err, tc.ref)
			}
		})
	}
}
