package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/snapply/snapply/internal/store"
)

const webApp = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS}
data: {color: blue}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27.0"}]}
`

func TestPlanJSONContract(t *testing.T) {
	ns := env.Namespace(t)
	dir := manifests(t, ns, map[string]string{"app.yaml": webApp})
	db := filepath.Join(t.TempDir(), "s.db")
	r := snapply(t, "plan", dir, "--store", db, "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got struct {
		Snapshot string         `json:"snapshot"`
		Summary  map[string]int `json:"summary"`
		Changes  []struct {
			Ref    map[string]string `json:"ref"`
			Action string            `json:"action"`
			Source struct {
				File string `json:"file"`
				Line int    `json:"line"`
			} `json:"source"`
			Diff string `json:"diff"`
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not JSON (%v):\n%s", err, r.stdout)
	}
	if got.Summary["create"] != 2 || len(got.Changes) != 2 {
		t.Fatalf("summary %v, %d changes; want 2 creates", got.Summary, len(got.Changes))
	}
	for _, c := range got.Changes {
		if c.Action != "create" || c.Source.File != "app.yaml" || c.Source.Line == 0 || c.Diff == "" || c.Ref["namespace"] != ns {
			t.Errorf("change %+v", c)
		}
	}
	// The snapshot the plan names is in the store.
	s, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Snapshot(got.Snapshot); err != nil {
		t.Errorf("plan names snapshot %q that the store lacks: %v", got.Snapshot, err)
	}
}

func TestPlanDetailedExitCode(t *testing.T) {
	ns := env.Namespace(t)
	dir := manifests(t, ns, map[string]string{"app.yaml": webApp})
	db := filepath.Join(t.TempDir(), "s.db")
	if r := snapply(t, "plan", dir, "--store", db, "--detailed-exitcode", "-q"); r.code != 2 {
		t.Fatalf("plan with changes: exit %d, want 2\n%s", r.code, r.stderr)
	}
	if r := snapply(t, "plan", dir, "--store", db, "-q"); r.code != 0 {
		t.Fatalf("plan with changes, no --detailed-exitcode: exit %d, want 0\n%s", r.code, r.stderr)
	}
	if r := snapply(t, "apply", dir, "--store", db, "--wait=false", "-q", "--name", ns, "--inventory-namespace", ns); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := snapply(t, "plan", dir, "--store", db, "--detailed-exitcode", "--name", ns, "--inventory-namespace", ns)
	if r.code != 0 || !strings.Contains(r.stdout, "No changes.") {
		t.Fatalf("plan after apply: exit %d, want 0 and no changes\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestPlanBadInput(t *testing.T) {
	ns := env.Namespace(t)
	unreachable := filepath.Join(t.TempDir(), "kubeconfig")
	kc, err := os.ReadFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// Same credentials, a port nothing listens on.
	var lines []string
	for _, l := range strings.Split(string(kc), "\n") {
		if strings.Contains(l, "server:") {
			l = "    server: https://127.0.0.1:1"
		}
		lines = append(lines, l)
	}
	if err := os.WriteFile(unreachable, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	good := manifests(t, ns, map[string]string{"app.yaml": webApp})

	cases := []struct {
		name string
		args []string
		want []string // substrings of the one error line
	}{
		{"invalid yaml", []string{"../../fixtures/bad/tab-indent.yaml"}, []string{"tab-indent.yaml:"}},
		{"unclosed quote", []string{"../../fixtures/bad/unclosed-quote.yaml"}, []string{"unclosed-quote.yaml:"}},
		{"no kind", []string{"../../fixtures/bad/missing-kind.yaml"}, []string{"missing-kind.yaml", "kind"}},
		{"no name", []string{"../../fixtures/bad/missing-name.yaml"}, []string{"missing-name.yaml", "metadata.name"}},
		{"kustomization fails", []string{"../../fixtures/bad/kustomize-missing-resource"}, []string{"kustomization.yaml"}},
		{"duplicate", []string{"../../fixtures/bad/duplicate"}, []string{"defined twice"}},
		{"no such path", []string{"./does-not-exist"}, []string{"does-not-exist", "no such file or directory"}},
		{"unreachable api server", []string{good, "--kubeconfig", unreachable}, []string{"cannot reach the API server at https://127.0.0.1:1"}},
		{"bad output", []string{good, "-o", "yaml"}, []string{`unknown output format "yaml"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"plan", "--store", filepath.Join(t.TempDir(), "s.db"), "-q"}, tc.args...)
			var r result
			if slices.Contains(tc.args, "--kubeconfig") {
				r = runRaw(t, args...)
			} else {
				r = snapply(t, args...)
			}
			if r.code != 1 {
				t.Errorf("exit %d, want 1", r.code)
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty (half a report?):\n%s", r.stdout)
			}
			errLines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if len(errLines) != 1 || !strings.HasPrefix(errLines[0], "error: ") {
				t.Fatalf("stderr is not one error line:\n%s", r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(errLines[0], w) {
					t.Errorf("error %q lacks %q", errLines[0], w)
				}
			}
			if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("stack trace reached the user:\n%s", r.stderr)
			}
		})
	}
}
