package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// unreachableKubeconfig writes the test kubeconfig with its server moved to
// a port nothing listens on.
func unreachableKubeconfig(t *testing.T) string {
	t.Helper()
	kc, err := os.ReadFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(kc), "\n") {
		if strings.Contains(l, "server:") {
			l = "    server: https://127.0.0.1:1"
		}
		lines = append(lines, l)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExitCodes runs every row of the README's exit-code table for diff
// and plan: 1 is never an error for diff, and 2 is never an error for plan.
func TestExitCodes(t *testing.T) {
	ns := env.Namespace(t)
	db, ids := storeOf(t,
		[]*unstructured.Unstructured{obj(t, configMapA)},
		[]*unstructured.Unstructured{obj(t, configMapA)},
		[]*unstructured.Unstructured{obj(t, strings.Replace(configMapA, `k: "1"`, `k: "2"`, 1))},
	)
	unreachable := unreachableKubeconfig(t)
	missing := filepath.Join(t.TempDir(), "missing.db")

	planStore := filepath.Join(t.TempDir(), "plan.db")
	inv := []string{"--store", planStore, "--name", ns, "--inventory-namespace", ns, "-q"}
	applied := manifests(t, ns, map[string]string{"app.yaml": twoConfigMaps})
	if r := snapply(t, append([]string{"apply", applied, "--wait=false"}, inv...)...); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	changed := manifests(t, ns, map[string]string{"app.yaml": strings.Replace(twoConfigMaps, `k: "1"`, `k: "changed"`, 1)})
	invalid := manifests(t, ns, map[string]string{"app.yaml": twoConfigMaps + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, namespace: " + ns + "}\ndata: {k: 1}\nunknownField: x\n"})

	tests := []struct {
		name string
		args []string
		raw  bool // run without the test kubeconfig
		want int
	}{
		{"diff: no differences", []string{"diff", "--store", db, ids[0], ids[1], "--exit-code"}, true, 0},
		{"diff: differences", []string{"diff", "--store", db, ids[1], ids[2], "--exit-code"}, true, 1},
		{"diff: differences without --exit-code", []string{"diff", "--store", db, ids[1], ids[2]}, true, 0},
		{"diff: missing store file", []string{"diff", "--store", missing, "latest", "latest", "--exit-code"}, true, 2},
		{"diff: unknown snapshot", []string{"diff", "--store", db, ids[0], "nope", "--exit-code"}, true, 2},
		{"diff: unknown flag", []string{"diff", "--store", db, ids[0], ids[1], "--exit-code", "--nope"}, true, 2},
		{"diff: wrong arguments", []string{"diff", "--store", db, ids[0], "--exit-code"}, true, 2},
		{"diff: bad output", []string{"diff", "--store", db, ids[0], ids[1], "--exit-code", "-o", "yaml"}, true, 2},
		{"diff --live: unreachable cluster", []string{"diff", "--store", db, "latest", "--live", "--exit-code", "--kubeconfig", unreachable}, true, 2},
		{"diff --live: no drift", []string{"diff", "--store", planStore, "latest", "--live", "--exit-code"}, false, 0},

		{"plan: no changes", append([]string{"plan", applied, "--detailed-exitcode"}, inv...), false, 0},
		{"plan: changes", append([]string{"plan", changed, "--detailed-exitcode"}, inv...), false, 2},
		{"plan: changes without --detailed-exitcode", append([]string{"plan", changed}, inv...), false, 0},
		{"plan: invalid object", append([]string{"plan", invalid, "--detailed-exitcode"}, inv...), false, 1},
		{"plan: render error", append([]string{"plan", "../../fixtures/bad/missing-kind.yaml", "--detailed-exitcode"}, inv...), false, 1},
		{"plan: unknown flag", append([]string{"plan", applied, "--detailed-exitcode", "--nope"}, inv...), false, 1},
		{"plan: unreachable cluster", append([]string{"plan", applied, "--detailed-exitcode", "--kubeconfig", unreachable}, inv...), true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r result
			if tt.raw {
				r = runRaw(t, tt.args...)
			} else {
				r = snapply(t, tt.args...)
			}
			if r.code != tt.want {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, tt.want, r.stdout, r.stderr)
			}
			// An error says so in one line; a verdict (differences, changes)
			// prints no error.
			errorCode := map[string]int{"diff": 2, "plan": 1}[tt.args[0]]
			if errs := strings.Count(r.stderr, "error: "); (tt.want == errorCode) != (errs == 1) || errs > 1 {
				t.Errorf("exit %d with %d error lines:\n%s", r.code, errs, r.stderr)
			}
		})
	}
}
