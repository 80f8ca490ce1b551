package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/snapply/snapply/internal/github/githubtest"
)

// TestActionDriftIssueLifecycle runs the action on schedule against one
// environment: no issue while in sync; an issue opened on the first drift;
// the same issue, without a comment, while the drift stays the same; a
// comment when the drifted objects change; closed with a comment once the
// cluster matches git again. No Secret value leaves snapply on the way.
func TestActionDriftIssueLifecycle(t *testing.T) {
	ns := env.Namespace(t)
	files := map[string]string{"app.yaml": configMaps, "secret.yaml": secretManifest("s3cr3t-data-value")}
	r := newRunner(t, ns, files)
	db := filepath.Join(t.TempDir(), "apply.db")
	if res := applyIn(t, ns, db, r.workspace, "--wait=false"); res.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var logs []string
	drift := func(fixture string) {
		t.Helper()
		res := r.run(fixture, nil)
		if res.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", fixture, res.code, res.stdout, res.stderr)
		}
		out, _ := os.ReadFile(r.outputs)
		sum, _ := os.ReadFile(r.summary)
		logs = append(logs, res.stdout, res.stderr, string(out), string(sum))
	}
	ctx := context.Background()
	cms := clientset(t).CoreV1().ConfigMaps(ns)

	// In sync: nothing to open.
	drift("schedule")
	if got := r.output("drifted"); got != "false" || r.output("drift-count") != "0" {
		t.Fatalf("in sync: drifted %q, drift-count %q", got, r.output("drift-count"))
	}
	if is := r.gh.Issues(); len(is) != 0 {
		t.Fatalf("in sync: issues %+v", is)
	}

	// Someone edits a ConfigMap and a Secret: the issue opens.
	a, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.Data["k"] = "9"
	if _, err := cms.Update(ctx, a, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	secrets := clientset(t).CoreV1().Secrets(ns)
	s, err := secrets.Get(ctx, "creds", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Data["token"] = []byte("s3cr3t-changed-value")
	if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	drift("schedule")
	is := r.gh.Issues()
	if len(is) != 1 || is[0].Title != "Drift in "+ns || is[0].State != "open" || len(is[0].Labels) != 1 || is[0].Labels[0] != "snapply-drift" {
		t.Fatalf("after the first drift: issues %+v", is)
	}
	first := is[0]
	for _, want := range []string{"data.k: git 1, live 9 (kubectl-edit, ", "`configmap/a -n " + ns + "`", "`secret/creds -n " + ns + "`", "token: <redacted sha256:"} {
		if !strings.Contains(first.Body, want) {
			t.Errorf("issue body has no %q:\n%s", want, first.Body)
		}
	}
	if r.output("drifted") != "true" || r.output("drift-count") != "2" || r.output("comment-url") != first.HTMLURL {
		t.Errorf("outputs: drifted %q, drift-count %q, comment-url %q", r.output("drifted"), r.output("drift-count"), r.output("comment-url"))
	}

	// The same drift: the same issue, no comment.
	drift("schedule")
	if is := r.gh.Issues(); len(is) != 1 || is[0].State != "open" {
		t.Fatalf("second run: issues %+v", is)
	}
	if c := r.gh.Comments(first.Number); len(c) != 0 {
		t.Errorf("second run commented although the drift is the same: %+v", c)
	}

	// Another object drifts (deleted out of band): the body is edited in
	// place and a comment says so. A manual run with mode: drift does it.
	if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	drift("workflow_dispatch-drift")
	is = r.gh.Issues()
	if len(is) != 1 || !strings.Contains(is[0].Body, "`configmap/b -n "+ns+"` (missing)") {
		t.Fatalf("after the set changed: issues %+v", is)
	}
	comments := r.gh.Comments(first.Number)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "The drifted objects changed") || !strings.Contains(comments[0].Body, "now 3 objects") {
		t.Fatalf("comments after the set changed: %+v", comments)
	}

	// Re-applied: the issue is closed with a comment.
	if res := applyIn(t, ns, db, r.workspace, "--wait=false", "--force-conflicts"); res.code != 0 {
		t.Fatalf("re-apply: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	drift("schedule")
	is = r.gh.Issues()
	if len(is) != 1 || is[0].State != "closed" {
		t.Fatalf("after the re-apply: issues %+v", is)
	}
	comments = r.gh.Comments(first.Number)
	if len(comments) != 2 || !strings.Contains(comments[1].Body, "The cluster matches git again") {
		t.Fatalf("comments after the re-apply: %+v", comments)
	}
	if r.output("drifted") != "false" {
		t.Errorf("drifted = %q after the re-apply", r.output("drifted"))
	}

	// No Secret value in any issue, comment, request, output or log.
	for _, req := range r.gh.Requests() {
		logs = append(logs, req.Body)
	}
	for _, i := range r.gh.Issues() {
		logs = append(logs, i.Body)
	}
	for _, c := range r.gh.Comments(first.Number) {
		logs = append(logs, c.Body)
	}
	all := strings.Join(logs, "\n")
	for _, v := range secretValues {
		for _, line := range strings.Split(all, "\n") {
			if strings.Contains(line, v) && !strings.HasPrefix(line, "::add-mask::") {
				t.Errorf("the secret value %q left snapply: %.200s", v, line)
				break
			}
		}
	}
}

// TestActionDriftWithoutIssuesPermission warns and still reports.
func TestActionDriftWithoutIssuesPermission(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	if res := applyIn(t, ns, filepath.Join(t.TempDir(), "a.db"), r.workspace, "--wait=false"); res.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if err := clientset(t).CoreV1().ConfigMaps(ns).Delete(context.Background(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.gh.Forbid("GET /repos/" + githubtest.Repository + "/issues")
	res := r.run("schedule", nil)
	if res.code != 0 || !strings.Contains(res.stdout, "::warning::drift issue: ") || !strings.Contains(res.stdout, `"issues: write"`) {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if r.output("drifted") != "true" || r.output("drift-count") != "1" {
		t.Errorf("outputs: drifted %q, drift-count %q", r.output("drifted"), r.output("drift-count"))
	}
}

// TestActionPolicyWarnShowsInThePlanComment runs the plan of a pull request
// with the policy input: a warn shows in the comment, and the step passes.
func TestActionPolicyWarnShowsInThePlanComment(t *testing.T) {
	ns := env.Namespace(t)
	files := map[string]string{"app/app.yaml": strings.Replace(latestApp, "web:latest", "web:1.4.2", 1)}
	for _, name := range []string{"kubernetes.rego", "labels.rego", "images.rego"} {
		b, err := os.ReadFile(filepath.Join(examplePolicies, name))
		if err != nil {
			t.Fatal(err)
		}
		files["policies/"+name] = string(b)
	}
	r := newRunner(t, ns, files)
	res := r.run("pull_request-opened", map[string]string{"INPUT_PATH": "app", "INPUT_POLICY": "policies"})
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	comments := r.gh.Comments(pullRequestFixture)
	if len(comments) != 1 {
		t.Fatalf("comments: %+v", comments)
	}
	for _, want := range []string{"Policy: 0 deny, 1 warn.", "policy warning `warn_required_labels`", "| warn | `warn_required_labels` | Deployment/web: missing the label app.kubernetes.io/part-of |"} {
		if !strings.Contains(comments[0].Body, want) {
			t.Errorf("comment has no %q:\n%s", want, comments[0].Body)
		}
	}
}

// TestActionPolicySyntaxErrorIsAnnotated: a policy that does not parse is
// an error annotation on its file and line, and the step fails.
func TestActionPolicySyntaxErrorIsAnnotated(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{
		"app/app.yaml":        configMaps,
		"policies/bad.rego":   "package main\n\ndeny contains msg if {\n  msg := sprintf(\"%s\", [input.kind]\n}\n",
		"policies/other.rego": "package main\n",
	})
	res := r.run("pull_request-opened", map[string]string{"INPUT_PATH": "app", "INPUT_POLICY": "policies"})
	if res.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "::error file=policies/bad.rego,line=5,title=snapply%3A policy does not compile::rego_parse_error: ") {
		t.Errorf("no error annotation on the policy's file and line:\n%s", res.stdout)
	}
}

// TestActionDriftOrphans: with the orphans input, an object of a managed
// namespace that nothing claims is drift; without it, it is not.
func TestActionDriftOrphans(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	if res := applyIn(t, ns, filepath.Join(t.TempDir(), "a.db"), r.workspace, "--wait=false"); res.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	stray := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: ns}, Data: map[string]string{"k": "v"}}
	if _, err := clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res := r.run("schedule", nil)
	if res.code != 0 || r.output("drifted") != "false" || len(r.gh.Issues()) != 0 {
		t.Fatalf("without orphans: exit %d, drifted %q, issues %+v\n%s%s", res.code, r.output("drifted"), r.gh.Issues(), res.stdout, res.stderr)
	}
	res = r.run("schedule", map[string]string{"INPUT_ORPHANS": "true"})
	if res.code != 0 || r.output("drifted") != "true" || r.output("drift-count") != "1" {
		t.Fatalf("with orphans: exit %d, drifted %q, drift-count %q\n%s%s", res.code, r.output("drifted"), r.output("drift-count"), res.stdout, res.stderr)
	}
	if is := r.gh.Issues(); len(is) != 1 || !strings.Contains(is[0].Body, "`configmap/stray -n "+ns+"`") {
		t.Errorf("with orphans: the drift issue does not name the orphan: %+v", is)
	}
}
