package cli_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// brokenApp is a Deployment that reads a key its ConfigMap lacks.
const brokenApp = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS}
data: {color: blue}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27.0
        env: [{name: SIZE, valueFrom: {configMapKeyRef: {name: settings, key: size}}}]
`

func TestPlanFailOn(t *testing.T) {
	ns := env.Namespace(t)
	dir := manifests(t, ns, map[string]string{"app.yaml": brokenApp})
	db := filepath.Join(t.TempDir(), "s.db")

	r := snapply(t, "plan", dir, "--store", db, "--fail-on=data-loss,broken-ref")
	if r.code != 1 || !strings.Contains(r.stderr, "plan has risks that --fail-on names: 1 broken-ref") {
		t.Fatalf("--fail-on=broken-ref: exit %d, want 1 naming the risk\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"| risks: 1 broken-ref",
		`risk broken-ref: deployment.apps/web -n ` + ns + ` (containers[name=web].env[name=SIZE]) -> configmap/settings -n ` + ns + `: key "size" does not exist`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := snapply(t, "plan", dir, "--store", db, "--fail-on=rbac,exposure", "-q"); r.code != 0 {
		t.Errorf("--fail-on without the plan's risk kind: exit %d, want 0\n%s", r.code, r.stderr)
	}
	if r := snapply(t, "plan", dir, "--store", db, "--fail-on=broken-refs"); r.code != 1 || !strings.Contains(r.stderr, `unknown risk kind "broken-refs"`) {
		t.Errorf("unknown kind: exit %d\n%s", r.code, r.stderr)
	}
	if r := snapply(t, "plan", dir, "--store", db, "--diff=side-by-side"); r.code != 1 || !strings.Contains(r.stderr, `unknown diff mode "side-by-side"`) {
		t.Errorf("unknown diff mode: exit %d\n%s", r.code, r.stderr)
	}
}

func TestApplyFailOnChangesNothing(t *testing.T) {
	ns := env.Namespace(t)
	dir := manifests(t, ns, map[string]string{"app.yaml": brokenApp})
	db := filepath.Join(t.TempDir(), "s.db")
	r := applyIn(t, ns, db, dir, "--fail-on=broken-ref", "--wait=false")
	if r.code != 1 || !strings.Contains(r.stderr, "nothing was applied") {
		t.Fatalf("exit %d, want 1 and nothing applied\n%s%s", r.code, r.stdout, r.stderr)
	}
	_, err := clientset(t).AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("deployment after a refused apply: err %v, want not found", err)
	}
	if r := applyIn(t, ns, db, dir, "--fail-on=rbac", "--wait=false", "-q"); r.code != 0 {
		t.Errorf("apply without the plan's risk kind in --fail-on: exit %d\n%s", r.code, r.stderr)
	}
}

// TestPlanAnalysisIsStable plans an update twice: the JSON with fields,
// risks and images is byte-identical apart from the snapshot ID, and the
// text plan shows the structural diff by default and both with --diff=both.
func TestPlanAnalysisIsStable(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	if r := applyIn(t, ns, db, manifests(t, ns, map[string]string{"app.yaml": webApp}), "--wait=false", "-q"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	changed := strings.NewReplacer("nginx:1.27.0", "nginx:latest", "color: blue", "color: green").Replace(webApp)
	dir := manifests(t, ns, map[string]string{"app.yaml": changed})
	args := []string{"plan", dir, "--store", db, "--name", ns, "--inventory-namespace", ns}
	snapshotID := regexp.MustCompile(`"snapshot": "[^"]*"`)
	var outs []string
	for range 2 {
		r := snapply(t, append(args, "-o", "json")...)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		outs = append(outs, snapshotID.ReplaceAllString(r.stdout, `"snapshot": ""`))
	}
	if outs[0] != outs[1] {
		t.Errorf("two plans of the same input differ:\n%s\n---\n%s", outs[0], outs[1])
	}
	for _, want := range []string{
		`"path": "spec.template.spec.containers[name=web].image"`,
		`"kind": "image"`,
		`"status": "changed"`,
	} {
		if !strings.Contains(outs[0], want) {
			t.Errorf("JSON plan lacks %s:\n%s", want, outs[0])
		}
	}

	text := snapply(t, args...)
	both := snapply(t, append(args, "--diff=both")...)
	const field = "~ spec.template.spec.containers[name=web].image: nginx:1.27.0 -> nginx:latest"
	const line = "+      - image: nginx:latest"
	if !strings.Contains(text.stdout, field) || strings.Contains(text.stdout, line) {
		t.Errorf("default text plan: want the field diff only:\n%s", text.stdout)
	}
	if !strings.Contains(both.stdout, field) || !strings.Contains(both.stdout, line) {
		t.Errorf("--diff=both: want the field and the unified diff:\n%s", both.stdout)
	}
}

func TestReviewFlagCompletion(t *testing.T) {
	r := runRaw(t, "__complete", "plan", ".", "--fail-on", "data-loss,")
	if !strings.Contains(r.stdout, "data-loss,broken-ref\n") || strings.Contains(r.stdout, "data-loss,data-loss") {
		t.Errorf("--fail-on completion:\n%s", r.stdout)
	}
	r = runRaw(t, "__complete", "apply", ".", "--diff", "")
	for _, want := range []string{"structural\n", "unified\n", "both\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--diff completion lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestActionFailOn: with the fail-on input, a plan run comments with the
// risks first and fails; an apply run fails before applying anything.
func TestActionFailOn(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": brokenApp})
	inputs := map[string]string{"INPUT_FAIL-ON": "broken-ref"}

	res := r.run("pull_request-opened", inputs)
	if res.code != 1 || !strings.Contains(res.stdout, "::error::the plan has risks that the fail-on input names (broken-ref)") {
		t.Fatalf("plan: exit %d, want 1 with an error annotation\n%s%s", res.code, res.stdout, res.stderr)
	}
	comments := r.gh.Comments(pullRequestFixture)
	if len(comments) != 1 {
		t.Fatalf("plan: %d comments, want 1", len(comments))
	}
	body := comments[0].Body
	risks, table := strings.Index(body, "**Risks: 1 broken-ref.**"), strings.Index(body, "| action | object | source | note |")
	if risks < 0 || table < 0 || risks > table {
		t.Errorf("the comment does not list the risks above the changes:\n%s", body)
	}

	res = r.run("push-main", inputs)
	if res.code != 1 || !strings.Contains(res.stdout, "nothing was applied") {
		t.Fatalf("apply: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	_, err := clientset(t).AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("deployment after a refused apply: err %v, want not found", err)
	}
}
