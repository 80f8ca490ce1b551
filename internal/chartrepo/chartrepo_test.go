package chartrepo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckVersion(t *testing.T) {
	for v, ok := range map[string]bool{
		"1.2.3": true, "v1.2.3": true, "1.2.3-rc.1": true, "1.2.3+build.5": true,
		"": false, "1.2": false, "^1.2.3": false, "~1.2.3": false, "1.x": false, ">=1.0.0": false, "latest": false,
	} {
		err := CheckVersion(v)
		if (err == nil) != ok {
			t.Errorf("CheckVersion(%q) = %v, want ok=%v", v, err, ok)
		}
		if err != nil && !errors.Is(err, ErrUnpinned) {
			t.Errorf("CheckVersion(%q) = %v, want ErrUnpinned", v, err)
		}
	}
}

func TestDefaultCacheDir(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	if got := DefaultCacheDir(env(map[string]string{"SNAPPLY_CHART_CACHE": "/c", "RUNNER_TOOL_CACHE": "/r"})); got != "/c" {
		t.Errorf("got %s", got)
	}
	if got := DefaultCacheDir(env(map[string]string{"RUNNER_TOOL_CACHE": "/r", "XDG_CACHE_HOME": "/x"})); got != "/r/snapply/charts" {
		t.Errorf("got %s", got)
	}
	if got := DefaultCacheDir(env(map[string]string{"XDG_CACHE_HOME": "/x"})); got != "/x/snapply/charts" {
		t.Errorf("got %s", got)
	}
}

func TestLockRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), LockFileName)
	var ls Locks
	if err := ls.Record(p, "oci://r.example.com/charts/dns", "1.0.0", "sha256:aa"); err != nil {
		t.Fatal(err)
	}
	if err := ls.Save(); err != nil {
		t.Fatal(err)
	}
	// A second lock keeps the entries already there.
	var again Locks
	if err := again.Record(p, "https://charts.example.com/web", "2.0.0", "sha256:bb"); err != nil {
		t.Fatal(err)
	}
	if err := again.Save(); err != nil {
		t.Fatal(err)
	}
	l, err := ReadLock(p)
	if err != nil {
		t.Fatal(err)
	}
	if l.Digest("oci://r.example.com/charts/dns", "1.0.0") != "sha256:aa" || l.Digest("https://charts.example.com/web", "2.0.0") != "sha256:bb" {
		t.Errorf("lock: %+v", l)
	}
	if err := os.WriteFile(p, []byte("charts: {a: {1.0.0: x}}\nextra: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLock(p); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("a lock file with an unknown field: err = %v, want one line", err)
	}
}

func TestDefaultCredentials(t *testing.T) {
	t.Setenv("HELM_CONFIG_HOME", "/helm")
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	got := DefaultCredentials(env(nil))
	want := Credentials{RegistryConfig: "/helm/registry/config.json", RepositoryConfig: "/helm/repositories.yaml", Docker: true}
	if got != want {
		t.Errorf("Helm's defaults: got %+v, want %+v", got, want)
	}
	got = DefaultCredentials(env(map[string]string{"HELM_REGISTRY_CONFIG": "/r.json", "HELM_REPOSITORY_CONFIG": "/repos.yaml"}))
	want = Credentials{RegistryConfig: "/r.json", RepositoryConfig: "/repos.yaml", Docker: true}
	if got != want {
		t.Errorf("with Helm's variables: got %+v, want %+v", got, want)
	}
}

func TestURLErrorsHidePasswords(t *testing.T) {
	for _, repo := range []string{"https://u:pa55word@charts.example.com/%zz", "https://u:pa55word@charts example.com/"} {
		f := &Fetcher{CacheDir: t.TempDir()}
		_, _, err := f.Fetch(t.Context(), repo, "demo", "1.0.0", "")
		if err == nil || strings.Contains(err.Error(), "pa55word") {
			t.Errorf("Fetch(%s) = %v, want an error without the password", repo, err)
		}
	}
}
