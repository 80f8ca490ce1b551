package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/store"
)

// complete runs `snapply __complete args...` (what the shell scripts run)
// and returns the completions, without descriptions, and the directive.
func complete(t *testing.T, args ...string) ([]string, string, result) {
	t.Helper()
	r := runRaw(t, append([]string{"__complete"}, args...)...)
	if r.code != 0 {
		t.Fatalf("__complete %v: exit %d\n%s", args, r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	values := []string{}
	for _, l := range lines[:len(lines)-1] {
		v, _, _ := strings.Cut(l, "\t")
		values = append(values, v)
	}
	return values, lines[len(lines)-1], r
}

func TestCompleteSnapshotIDs(t *testing.T) {
	cm := obj(t, configMapA)
	db, ids := storeOf(t, []*unstructured.Unstructured{cm}, []*unstructured.Unstructured{cm, obj(t, strings.Replace(configMapA, "name: a", "name: b", 1))})
	newestFirst := []string{"latest", ids[1], ids[0]}
	for _, args := range [][]string{
		{"show", "--store", db, ""},
		{"diff", "--store", db, ""},
		{"diff", "--store", db, ids[0], ""},
		{"diff", "--store", db, "--live", ""},
	} {
		got, directive, r := complete(t, args...)
		if diff := cmp.Diff(newestFirst, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", args, diff)
		}
		if directive != ":36" { // no files, keep order
			t.Errorf("%v: directive %s", args, directive)
		}
		if !strings.Contains(r.stdout, ids[1]+"\tbefore, ") || !strings.Contains(r.stdout, "1 objects") {
			t.Errorf("%v: no description of the snapshots:\n%s", args, r.stdout)
		}
	}
	// A prefix narrows the list; show's second argument is an object.
	if got, _, _ := complete(t, "show", "--store", db, ids[1][:len(ids[1])-1]); !cmp.Equal(got, []string{ids[1]}) {
		t.Errorf("prefix: %v", got)
	}
	if got, _, _ := complete(t, "show", "--store", db, ids[1], ""); !cmp.Equal(got, []string{"ConfigMap/ns/a", "ConfigMap/ns/b"}) {
		t.Errorf("show's objects: %v", got)
	}
	// Nothing more after the last snapshot; nothing, and no error, from a
	// missing store.
	for _, args := range [][]string{
		{"diff", "--store", db, ids[0], ids[1], ""},
		{"diff", "--store", db, "--live", ids[0], ""},
		{"show", "--store", filepath.Join(t.TempDir(), "none.db"), ""},
		{"rollback", "--store", db, "--to", ""}, // no recorded run in it
	} {
		if got, _, r := complete(t, args...); len(got) != 0 || strings.Contains(r.stderr, "error") {
			t.Errorf("%v: %v\n%s", args, got, r.stderr)
		}
	}
}

// An encrypted store completes with the key the commands use: the one in
// SNAPPLY_STORE_KEY, or in the variable --store-key-env names; without it,
// or with a wrong one, nothing, and no error.
func TestCompleteSnapshotIDsOfAnEncryptedStore(t *testing.T) {
	t.Setenv(store.KeyEnv, "")
	t.Setenv("OTHER_KEY", testKeyA)
	t.Setenv("WRONG_KEY", testKeyB)
	cm := obj(t, configMapA)
	db, ids := storeOf(t, []*unstructured.Unstructured{cm}, []*unstructured.Unstructured{cm, obj(t, strings.Replace(configMapA, "name: a", "name: b", 1))})
	if r := runRaw(t, "store", "encrypt", "--store", db, "--store-key-env", "OTHER_KEY"); r.code != 0 {
		t.Fatalf("encrypt: exit %d\n%s", r.code, r.stderr)
	}
	nothing := func(what string, args ...string) {
		t.Helper()
		if got, _, r := complete(t, args...); len(got) != 0 || strings.Contains(r.stderr, "rror") || strings.Contains(r.stderr, "key") {
			t.Errorf("%s: %v\n%s", what, got, r.stderr)
		}
	}
	nothing("no key", "show", "--store", db, "")
	nothing("wrong key", "show", "--store", db, "--store-key-env", "WRONG_KEY", "")

	newestFirst := []string{"latest", ids[1], ids[0]}
	for _, args := range [][]string{
		{"show", "--store", db, "--store-key-env", "OTHER_KEY", ""},
		{"diff", "--store-key-env", "OTHER_KEY", "--store", db, ids[0], ""},
	} {
		if got, _, r := complete(t, args...); !cmp.Equal(got, newestFirst) {
			t.Errorf("%v: %v, want %v\n%s", args, got, newestFirst, r.stderr)
		}
	}
	if got, _, _ := complete(t, "show", "--store", db, "--store-key-env", "OTHER_KEY", ids[1], ""); !cmp.Equal(got, []string{"ConfigMap/ns/a", "ConfigMap/ns/b"}) {
		t.Errorf("show's objects: %v", got)
	}
	// SNAPPLY_STORE_KEY, when no --store-key-env is given.
	t.Setenv(store.KeyEnv, testKeyA)
	if got, _, _ := complete(t, "diff", "--store", db, ""); !cmp.Equal(got, newestFirst) {
		t.Errorf("with %s: %v, want %v", store.KeyEnv, got, newestFirst)
	}
	// Completion read the file and left it as it was: still encrypted.
	nothing("encrypted after completion", "show", "--store", db, "--store-key-env", "WRONG_KEY", "")
}

func TestCompleteRollbackToRecordedRuns(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	dir := manifests(t, ns, map[string]string{"cm.yaml": twoConfigMaps})
	if r := snapply(t, "plan", dir, "--store", db, "-q", "--name", ns, "--inventory-namespace", ns); r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	if r := applyIn(t, ns, db, dir, "-q"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	run := storeRuns(t, db)[0]
	got, _, _ := complete(t, "rollback", "--store", db, "--to", "")
	// The run's after, desired and before snapshots, not the plan's.
	if diff := cmp.Diff([]string{"latest", run.After, run.Desired, run.Before}, got); diff != "" {
		t.Errorf("rollback --to (-want +got):\n%s", diff)
	}
}

func TestCompleteKubeconfigNames(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- {name: east, cluster: {server: "https://east.example:6443"}}
- {name: west, cluster: {server: "https://west.example:6443"}}
users:
- {name: admin, user: {token: x}}
contexts:
- {name: prod, context: {cluster: east, user: admin, namespace: shop}}
- {name: dev, context: {cluster: west, user: admin}}
current-context: dev
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"plan", "--kubeconfig", kc, "--context", ""}, []string{"dev", "prod"}},
		{[]string{"diff", "--kubeconfig", kc, "--cluster", ""}, []string{"east", "west"}},
		{[]string{"version", "--kubeconfig", kc, "--user", ""}, []string{"admin"}},
	} {
		got, directive, r := complete(t, tt.args...)
		if !cmp.Equal(got, tt.want) || directive != ":4" {
			t.Errorf("%v: %v %s, want %v :4", tt.args, got, directive, tt.want)
		}
		if tt.want[0] == "dev" && !strings.Contains(r.stdout, "prod\tcluster east, user admin, namespace shop\n") {
			t.Errorf("context descriptions:\n%s", r.stdout)
		}
	}
	// KUBECONFIG is read when --kubeconfig is not given.
	t.Setenv("KUBECONFIG", kc)
	if got, _, _ := complete(t, "apply", "--context", ""); !cmp.Equal(got, []string{"dev", "prod"}) {
		t.Errorf("contexts from KUBECONFIG: %v", got)
	}
}

func TestCompleteNamespaces(t *testing.T) {
	ns := env.Namespace(t)
	got, _, _ := complete(t, "plan", "--kubeconfig", env.Kubeconfig, "-n", ns[:len(ns)-1])
	if !cmp.Equal(got, []string{ns}) {
		t.Errorf("-n %s: %v, want [%s]", ns[:len(ns)-1], got, ns)
	}
	// An unreachable cluster completes nothing, quickly, and says nothing.
	start := time.Now()
	got, directive, r := complete(t, "plan", "--kubeconfig", unreachableKubeconfig(t), "-n", "")
	if len(got) != 0 || directive != ":4" || strings.Contains(r.stderr, "error") || strings.Contains(r.stderr, "127.0.0.1") {
		t.Errorf("unreachable: %v %s\n%s", got, directive, r.stderr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("unreachable: took %s", d)
	}
}

func TestCompleteFlagValues(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"plan", "-o", ""}, []string{"text", "markdown", "json", "html"}},
		{[]string{"apply", "-o", ""}, []string{"text", "markdown", "json"}},
		{[]string{"rollback", "--output", ""}, []string{"text", "markdown", "json"}},
		{[]string{"diff", "-o", ""}, []string{"text", "json", "html"}},
		{[]string{"show", "-o", ""}, []string{"yaml", "html"}},
		{[]string{"drift", "-o", ""}, []string{"text", "markdown", "json"}},
		{[]string{"graph", "-o", ""}, []string{"mermaid", "dot", "json", "text"}},
		{[]string{"history", "-o", ""}, []string{"text", "json"}},
		{[]string{"version", "-o", ""}, []string{"text", "json"}},
		{[]string{"render", "-o", ""}, []string{"yaml", "json"}},
		{[]string{"plan", "--scope", ""}, []string{"managed", "namespaces", "cluster"}},
		{[]string{"rollback", "--state", ""}, []string{"desired", "before"}},
		{[]string{"show", "--color", ""}, []string{"auto", "always", "never"}},
	} {
		if got, _, _ := complete(t, tt.args...); !cmp.Equal(got, tt.want) {
			t.Errorf("%v: %v, want %v", tt.args, got, tt.want)
		}
	}
}
