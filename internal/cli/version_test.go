package cli_test

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
)

// versionFields is `snapply version -o json` as the README documents it.
type versionFields struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

func decodeVersion(t *testing.T, r result) (client versionFields, server *versionFields) {
	t.Helper()
	var got struct {
		Client versionFields  `json:"clientVersion"`
		Server *versionFields `json:"serverVersion"`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(r.stdout)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("version -o json: %v\n%s", err, r.stdout)
	}
	return got.Client, got.Server
}

func TestVersionJSON(t *testing.T) {
	r := runRaw(t, "version", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	c, s := decodeVersion(t, r)
	want := versionFields{Version: c.Version, Commit: c.Commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if c != want || c.Version == "" || c.Commit == "" {
		t.Errorf("clientVersion %+v, want %+v with a version and a commit", c, want)
	}
	if s != nil {
		t.Errorf("serverVersion without --server: %+v", s)
	}

	r = snapply(t, "version", "-o", "json", "--server")
	if r.code != 0 {
		t.Fatalf("--server: exit %d\n%s", r.code, r.stderr)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := dc.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	wantServer := versionFields{Version: sv.GitVersion, Commit: sv.GitCommit, GoVersion: sv.GoVersion, Platform: sv.Platform}
	if _, s = decodeVersion(t, r); s == nil || *s != wantServer || s.Version == "" {
		t.Errorf("serverVersion %+v, want the test API server's %+v", s, wantServer)
	}

	r = snapply(t, "version", "--server")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "snapply ") || !strings.HasPrefix(lines[1], "server "+sv.GitVersion+" ") {
		t.Errorf("text: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// An unreachable server: the client's version, and one error line.
	r = runRaw(t, "version", "-o", "json", "--server", "--kubeconfig", unreachableKubeconfig(t))
	if c, s := decodeVersion(t, r); r.code != 1 || c.Version == "" || s != nil || !strings.Contains(r.stderr, "cannot reach the API server") {
		t.Errorf("unreachable: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// The no-kubeconfig error names where snapply looked and what to do.
func TestNoKubeconfig(t *testing.T) {
	t.Setenv("KUBECONFIG", "/nonexistent")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	dir := manifests(t, "x", map[string]string{"cm.yaml": twoConfigMaps})
	store := t.TempDir() + "/s.db"
	for _, args := range [][]string{
		{"plan", dir, "--store", store},
		{"apply", dir, "--store", store},
		{"render", dir},
		{"version", "--server"},
	} {
		r := runRaw(t, append(args, "-q")...)
		if args[0] != "version" && r.stdout != "" {
			t.Errorf("%v: stdout not empty:\n%s", args, r.stdout)
		}
		line := strings.TrimSpace(r.stderr)
		if r.code != 1 || strings.Count(line, "\n") != 0 {
			t.Errorf("%v: exit %d, want 1 and one line:\n%s", args, r.code, r.stderr)
		}
		for _, want := range []string{
			"error: no kubeconfig found",
			"KUBECONFIG=/nonexistent (/nonexistent: no such file",
			"~/.kube/config is not read when KUBECONFIG is set",
			"in-cluster config (KUBERNETES_SERVICE_HOST is unset)",
			"pass --kubeconfig FILE, or set KUBECONFIG",
		} {
			if !strings.Contains(line, want) {
				t.Errorf("%v: error lacks %q:\n%s", args, want, line)
			}
		}
		if strings.Contains(line, "localhost:8080") {
			t.Errorf("%v: still about localhost:8080:\n%s", args, line)
		}
	}
	// Commands that need no cluster do not look for one.
	for _, args := range [][]string{{"render", dir, "--offline"}, {"version"}} {
		if r := runRaw(t, append(args, "-q")...); r.code != 0 || r.stdout == "" {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}
