package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/snapply/snapply/internal/apply"
)

// refusal is the report entry of the one object the API server refuses.
type refusal struct {
	ref     string   // as the report prints it; NS stands for the test's namespace
	source  string   // file:line, relative to fixtures/bad
	message []string // fragments of the server's message
}

// badInput is one input of fixtures/bad (or one the test generates) and
// what plan and apply make of it.
type badInput struct {
	name     string
	input    string                        // under fixtures/bad
	gen      func(t *testing.T) string     // or an input the test writes
	baseline string                        // applied first (under fixtures/bad)
	nsFlag   bool                          // run with -n NS
	flags    []string                      // more flags for plan and apply
	planOnly bool                          // plan only (apply takes the same path)
	fatal    []string                      // refused as a whole: fragments of the one error line
	refused  *refusal                      // or planned, with this object refused
	code     int                           // else: the exit code of plan and of apply
	planOut  []string                      // fragments of plan's stdout; NS is the namespace
	applyOut []string                      // fragments of apply's stdout
	live     []string                      // the inventory's ConfigMaps and Deployments after apply
	check    func(t *testing.T, ns string) // more checks after apply
}

// TestBadInput runs plan, plan -o json and apply on every input of
// fixtures/bad (see its README). An input refused as a whole gives exit 1,
// nothing on stdout, one error line naming the file (and line) or the object,
// and changes nothing; an object the API server refuses is reported with its
// source and the server's message, exit 1, and apply writes the others.
func TestBadInput(t *testing.T) {
	cases := []badInput{
		// Inputs that do not render.
		{name: "tab indentation", input: "tab-indent.yaml", fatal: []string{"tab-indent.yaml:6: yaml: found character that cannot start any token"}},
		{name: "unclosed quote", input: "unclosed-quote.yaml", fatal: []string{"unclosed-quote.yaml:4: yaml: found unexpected end of stream"}},
		{name: "bad indentation", input: "bad-indent.yaml", fatal: []string{"bad-indent.yaml:7: yaml: did not find expected key"}},
		{name: "document is a list", input: "list-document.yaml", fatal: []string{"list-document.yaml:2: document is a list, not an object (wrap the items in a kind: List)"}},
		{name: "document is a scalar", input: "scalar-document.yaml", fatal: []string{"scalar-document.yaml:6: document is a scalar, not an object"}},
		{name: "missing apiVersion", input: "missing-apiversion.yaml", fatal: []string{"missing-apiversion.yaml:1: ConfigMap has no apiVersion"}},
		{name: "missing kind", input: "missing-kind.yaml", fatal: []string{"missing-kind.yaml:2: object has no kind"}},
		{name: "missing name", input: "missing-name.yaml", fatal: []string{"missing-name.yaml:6: ConfigMap has no metadata.name"}},
		{name: "duplicate across files", input: "duplicate", fatal: []string{"deployment.apps/web -n prod is defined twice: ", "a.yaml:1 and ", "b.yaml:8"}},
		{name: "kustomization with a missing resource", input: "kustomize-missing-resource", fatal: []string{"kustomize-missing-resource/kustomization.yaml: accumulating resources", "missing.yaml: no such file or directory"}},
		{name: "kustomization cycle", input: "kustomize-cycle/a", fatal: []string{"kustomize-cycle/a/kustomization.yaml: ", "cycle detected"}},
		{name: "remote base", input: "kustomize-remote", fatal: []string{"kustomize-remote/kustomization.yaml: ", "is remote: only files under the root are rendered"}},
		{name: "base outside the repository", input: "outside-repo", fatal: []string{"outside-repo/kustomization.yaml: ", " is outside the root "}},
		{
			name: "empty directory", gen: emptyDir, baseline: "invalid-among-valid/a.yaml",
			fatal: []string{"renders no objects (an empty desired set would prune everything)"},
			live:  []string{"first"},
		},
		// Inputs that render but cannot be planned.
		{name: "namespaced object without a namespace", input: "no-namespace.yaml", fatal: []string{"configmap/no-namespace (", "no-namespace.yaml:3): namespaced object has no metadata.namespace and no default namespace is set"}},
		{name: "cluster-scoped object with a namespace", input: "cluster-scoped-namespace.yaml", fatal: []string{"clusterrole.rbac.authorization.k8s.io/reader -n prod (", `cluster-scoped-namespace.yaml:3): cluster-scoped object has metadata.namespace "prod"`}},
		{
			// The server answers 500 for it; the planner knows the wording
			// and reports the object as invalid.
			name: "secret with invalid base64", input: "secret-invalid-base64.yaml", nsFlag: true,
			refused: &refusal{"secret/invalid-base64 -n NS", "secret-invalid-base64.yaml:2", []string{"illegal base64 data at input byte 7"}},
		},
		{
			// One object of 50 MiB: the API server takes 3 MiB at most.
			// Reading 50 MiB of YAML takes 2s, but 20s to a minute with
			// -race on 2 cores: plan only.
			name: "huge manifest", gen: hugeManifest, nsFlag: true, planOnly: true,
			refused: &refusal{"configmap/huge -n NS", "huge.yaml:1", []string{"Request entity too large: limit is 3145728"}},
		},
		// Objects the API server refuses.
		{name: "unknown kind", input: "unknown-kind.yaml", nsFlag: true, refused: &refusal{"gizmo/gizmo", "unknown-kind.yaml:2", []string{"the server does not serve Gizmo in v1 (unknown kind or API version; is its CRD installed?)"}}},
		{name: "unknown API version", input: "unknown-version.yaml", nsFlag: true, refused: &refusal{"deployment.apps/web", "unknown-version.yaml:2", []string{"the server does not serve Deployment in apps/v1beta9"}}},
		{name: "unknown field", input: "unknown-field.yaml", nsFlag: true, refused: &refusal{"configmap/unknown-field -n NS", "unknown-field.yaml:2", []string{".spec: field not declared in schema"}}},
		{name: "wrong type", input: "wrong-type.yaml", nsFlag: true, refused: &refusal{"deployment.apps/wrong-type -n NS", "wrong-type.yaml:2", []string{".spec.replicas: expected numeric (int or float), got string"}}},
		{name: "name that is not a DNS name", input: "invalid-name.yaml", nsFlag: true, refused: &refusal{"configmap/Web_Config -n NS", "invalid-name.yaml:2", []string{`metadata.name: Invalid value: "Web_Config": a lowercase RFC 1123 subdomain must consist of`}}},
		{
			name: "immutable field", input: "immutable-field/after.yaml", baseline: "immutable-field/before.yaml", nsFlag: true,
			refused: &refusal{"deployment.apps/immutable -n NS", "immutable-field/after.yaml:2", []string{"spec.selector: Invalid value: ", "field is immutable"}},
			live:    []string{"immutable"},
			check: func(t *testing.T, ns string) {
				d, err := clientset(t).AppsV1().Deployments(ns).Get(context.Background(), "immutable", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got := d.Spec.Selector.MatchLabels["app"]; got != "web" {
					t.Errorf("live selector app=%s, want web (as before)", got)
				}
			},
		},
		{
			name: "invalid object among valid ones", input: "invalid-among-valid", nsFlag: true,
			refused:  &refusal{"configmap/broken -n NS", "invalid-among-valid/b.yaml:2", []string{".colour: field not declared in schema"}},
			planOut:  []string{"Plan: 2 to create, 0 to update, 0 to delete, 0 conflicts, 1 invalid"},
			applyOut: []string{"Apply: 2 applied, 0 unchanged, 0 pruned, 0 failed, 1 not attempted"},
			live:     []string{"first", "last"},
		},
		// What --allow-empty lets through: the prune of everything.
		{
			name: "empty directory with --allow-empty", gen: emptyDir, baseline: "invalid-among-valid/a.yaml", flags: []string{"--allow-empty"},
			code:     0,
			planOut:  []string{"Plan: 0 to create, 0 to update, 1 to delete", "configmap/first -n NS (delete)"},
			applyOut: []string{"Apply: 0 applied, 0 unchanged, 1 pruned", "configmap/first -n NS (pruned)"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := env.Namespace(t)
			input := filepath.Join("..", "..", "fixtures", "bad", tc.input)
			if tc.gen != nil {
				input = tc.gen(t)
			}
			db := filepath.Join(t.TempDir(), "s.db")
			common := []string{"--store", db, "-q", "--color=never", "--name", ns, "--inventory-namespace", ns}
			if tc.nsFlag {
				common = append(common, "-n", ns)
			}
			common = append(common, tc.flags...)
			if tc.baseline != "" {
				base := filepath.Join("..", "..", "fixtures", "bad", tc.baseline)
				r := snapply(t, "apply", base, "--store", db, "-q", "--name", ns, "--inventory-namespace", ns, "-n", ns, "--wait=false")
				if r.code != 0 {
					t.Fatalf("baseline apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
				}
			}
			subst := func(s []string) []string {
				out := make([]string, len(s))
				for i, f := range s {
					out[i] = strings.ReplaceAll(f, "NS", ns)
				}
				return out
			}

			runs := map[string]result{"plan": snapply(t, append([]string{"plan", input}, common...)...)}
			if !tc.planOnly {
				runs["plan -o json"] = snapply(t, append([]string{"plan", input, "-o", "json"}, common...)...)
				runs["apply"] = snapply(t, append([]string{"apply", input, "--wait=false"}, common...)...)
			}
			plan, planJSON, applied := runs["plan"], runs["plan -o json"], runs["apply"]
			for name, r := range runs {
				noStackTrace(t, name, r)
				if strings.Contains(r.stdout+r.stderr, "hunter2") {
					t.Errorf("%s: a Secret value reached the output:\n%s%s", name, r.stdout, r.stderr)
				}
			}

			switch {
			case tc.fatal != nil:
				want := subst(tc.fatal)
				for name, r := range runs {
					wantOneError(t, name, r, want...)
				}
				if tc.baseline == "" {
					nothingWritten(t, ns)
				}
			case tc.refused != nil:
				ref := strings.ReplaceAll(tc.refused.ref, "NS", ns)
				wantExit(t, "plan", plan, 1, "error: plan has 0 conflicts and 1 invalid objects\n")
				wantEntry(t, "plan", plan.stdout, "! "+ref+" (invalid)", tc.refused.source, tc.refused.message)
				if tc.planOnly {
					break
				}
				wantExit(t, "plan -o json", planJSON, 1, "error: plan has 0 conflicts and 1 invalid objects\n")
				if !strings.Contains(planJSON.stdout, `"action": "invalid"`) {
					t.Errorf("plan -o json lacks the invalid change:\n%s", planJSON.stdout)
				}
				// apply writes the valid objects and not the refused one.
				wantExit(t, "apply", applied, 1, "error: apply failed: 0 failed, 1 not attempted, 0 not ready\n")
				msg := append([]string{"invalid: "}, tc.refused.message...)
				wantEntry(t, "apply", applied.stdout, "! "+ref+" (not attempted)", tc.refused.source, msg)
			default:
				wantExit(t, "plan", plan, tc.code, "")
				wantExit(t, "apply", applied, tc.code, "")
			}
			for _, w := range subst(tc.planOut) {
				if !strings.Contains(plan.stdout, w) {
					t.Errorf("plan stdout lacks %q:\n%s", w, plan.stdout)
				}
			}
			for _, w := range subst(tc.applyOut) {
				if !strings.Contains(applied.stdout, w) {
					t.Errorf("apply stdout lacks %q:\n%s", w, applied.stdout)
				}
			}
			if diff := cmp.Diff(tc.live, liveMembers(t, ns)); diff != "" {
				t.Errorf("inventory members after apply (-want +got):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, ns)
			}
		})
	}
}

// emptyDir returns an empty directory (git cannot hold one).
func emptyDir(t *testing.T) string { return t.TempDir() }

// hugeManifest writes a 50 MiB manifest: one ConfigMap with one 50 MiB
// value.
func hugeManifest(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\ndata:\n  blob: "); err != nil {
		t.Fatal(err)
	}
	chunk := []byte(strings.Repeat("0123456789abcdef", 1<<16)) // 1 MiB
	for range 50 {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.WriteString("\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantOneError checks that r is a refusal as a whole: exit 1, nothing on
// stdout (no half report), and on stderr (run with -q) one line "error: ..."
// that holds every fragment.
func wantOneError(t *testing.T, name string, r result, fragments ...string) {
	t.Helper()
	if r.code != 1 {
		t.Errorf("%s: exit %d, want 1", name, r.code)
	}
	if r.stdout != "" {
		t.Errorf("%s: stdout not empty:\n%s", name, r.stdout)
	}
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") {
		t.Errorf("%s: stderr is not one error line:\n%s", name, r.stderr)
		return
	}
	for _, f := range fragments {
		if !strings.Contains(lines[0], f) {
			t.Errorf("%s: error %q lacks %q", name, lines[0], f)
		}
	}
}

// wantExit checks the exit code and, when stderr is not "", the whole of
// stderr (run with -q).
func wantExit(t *testing.T, name string, r result, code int, stderr string) {
	t.Helper()
	if r.code != code {
		t.Errorf("%s: exit %d, want %d\n%s%s", name, r.code, code, r.stdout, r.stderr)
	}
	if stderr != "" && r.stderr != stderr {
		t.Errorf("%s: stderr %q, want %q", name, r.stderr, stderr)
	}
}

// wantEntry checks that a text report has the line that starts with head,
// naming source, followed (unless message is empty) by an indented line
// that holds every fragment of the message.
func wantEntry(t *testing.T, name, report, head, source string, message []string) {
	t.Helper()
	lines := strings.Split(report, "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, head) })
	if i < 0 || i+1 == len(lines) {
		t.Errorf("%s: no line %q in the report:\n%s", name, head, report)
		return
	}
	if !strings.HasSuffix(lines[i], "  "+source) && !strings.HasSuffix(lines[i], "/"+source) {
		t.Errorf("%s: %q does not end with its source %s", name, lines[i], source)
	}
	if len(message) == 0 {
		return
	}
	detail := lines[i+1]
	if !strings.HasPrefix(detail, "    ") {
		t.Errorf("%s: no message under %q:\n%s", name, lines[i], report)
	}
	for _, f := range message {
		if !strings.Contains(detail, f) {
			t.Errorf("%s: message %q lacks %q", name, detail, f)
		}
	}
}

// noStackTrace fails when a panic or a goroutine dump reached the user.
func noStackTrace(t *testing.T, name string, r result) {
	t.Helper()
	for _, s := range []string{r.stdout, r.stderr} {
		if strings.Contains(s, "panic") || strings.Contains(s, "goroutine ") {
			t.Errorf("%s: a stack trace reached the user:\n%s", name, s)
		}
	}
}

// liveMembers returns the names of the ConfigMaps and Deployments of ns that
// carry the ApplySet label, sorted.
func liveMembers(t *testing.T, ns string) []string {
	t.Helper()
	ctx := context.Background()
	cs := clientset(t)
	opts := metav1.ListOptions{LabelSelector: apply.PartOfLabel}
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	deps, err := cs.AppsV1().Deployments(ns).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cm := range cms.Items {
		names = append(names, cm.Name)
	}
	for _, d := range deps.Items {
		names = append(names, d.Name)
	}
	slices.Sort(names)
	return names
}

// nothingWritten checks that no inventory was made in ns and that the lock
// is not held: the run stopped before it wrote anything.
func nothingWritten(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	cs := clientset(t)
	if _, err := cs.CoreV1().Secrets(ns).Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused apply wrote the inventory Secret %s/%s (err %v)", ns, ns, err)
	}
	// An error found after the lock was taken (in the plan) releases it.
	lease, err := cs.CoordinationV1().Leases(ns).Get(ctx, apply.LeaseName(ns), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		t.Error(err)
	case lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "":
		t.Errorf("a refused apply still holds the lock %s/%s: %s", ns, lease.Name, *lease.Spec.HolderIdentity)
	}
}
