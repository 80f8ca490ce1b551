package cli_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snapply/snapply/internal/github/githubtest"
)

// execKubeconfig writes a kubeconfig like the one a cloud sign-in step
// leaves on the runner (aws eks update-kubeconfig, get-gke-credentials):
// its user runs an exec credential plugin, here a small program that
// prints an ExecCredential with the test API server's static token and
// leaves a mark that it ran.
func execKubeconfig(t *testing.T) (path, marker string) {
	t.Helper()
	dir := t.TempDir()
	marker = filepath.Join(dir, "plugin-ran")
	plugin := filepath.Join(dir, "token-plugin")
	cred := fmt.Sprintf(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":%q}}`, env.Token)
	script := fmt.Sprintf("#!/bin/sh\n# An exec credential plugin: prints an ExecCredential on stdout.\ntouch '%s'\nprintf '%%s\\n' '%s'\n", marker, cred)
	if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: cloud
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: oidc
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: %s
      interactiveMode: Never
contexts:
- name: cloud
  context: {cluster: cloud, user: oidc}
current-context: cloud
`, env.Config.Host, base64.StdEncoding.EncodeToString(env.Config.CAData), plugin)
	path = filepath.Join(dir, "config")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, marker
}

// With no kubeconfig input, the action uses the runner's KUBECONFIG (what
// a cloud sign-in step wrote), exec plugin included, and never shows the
// token it got.
func TestActionSignsInWithAnExecPlugin(t *testing.T) {
	ns := env.Namespace(t)
	kc, marker := execKubeconfig(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	r.gh.AddPull(githubtest.Pull{Number: pullRequestFixture, HeadSHA: "a3c9f1e07b2d4c6e8f0a1b2c3d4e5f60718293a4", MergedAt: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), MergeCommitSHA: mergeSHA})
	res := r.run("push-main", map[string]string{"INPUT_KUBECONFIG": "", "KUBECONFIG": kc})
	if res.code != 0 {
		t.Fatalf("apply with an exec plugin: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the exec plugin did not run: %v", err)
	}
	if got := resourceVersions(t, ns); len(got) != 2 {
		t.Fatalf("not applied: %v", got)
	}
	// The kubeconfig has no other credential than the plugin's: the mark
	// says the plugin ran, the objects that the apply went through.
	summary, _ := os.ReadFile(r.summary)
	outputs, _ := os.ReadFile(r.outputs)
	var comments strings.Builder
	for _, c := range r.gh.Comments(pullRequestFixture) {
		comments.WriteString(c.Body)
	}
	for where, text := range map[string]string{"log": res.stdout + res.stderr, "summary": string(summary), "outputs": string(outputs), "comments": comments.String()} {
		if strings.Contains(text, env.Token) {
			t.Errorf("the token is in the %s", where)
		}
	}
	if comments.Len() == 0 {
		t.Error("no comment on the merged pull request")
	}
	// And the same kubeconfig with a token the server does not know fails
	// with a clear error, not a plan.
	bad := strings.Replace(string(mustRead(t, kc)), "token-plugin", "missing-plugin", 1)
	if err := os.WriteFile(kc, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := r.run("pull_request-opened", map[string]string{"INPUT_KUBECONFIG": "", "KUBECONFIG": kc}); res.code == 0 {
		t.Errorf("a plugin that cannot run: exit 0\n%s", res.stdout)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
