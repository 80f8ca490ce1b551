package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// examplePolicies is the shipped policy directory.
var examplePolicies, _ = filepath.Abs(filepath.Join("..", "..", "examples", "policies"))

// latestApp breaks deny_latest_tag and warn_required_labels of the
// examples, and nothing else.
const latestApp = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: NS
  labels: {app.kubernetes.io/name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: ghcr.io/acme/web:latest
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {memory: 128Mi}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS}
data: {k: v}
`

func TestPolicyDenyStopsApplyAndChangesNothing(t *testing.T) {
	ns := env.Namespace(t)
	dir := manifests(t, ns, map[string]string{"app.yaml": latestApp})
	db := filepath.Join(t.TempDir(), "s.db")
	r := applyIn(t, ns, db, dir, "--policy", examplePolicies, "--wait=false")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := "error: deployment.apps/web -n " + ns + " (app.yaml:1): denied by policy deny_latest_tag: Deployment/web: container web uses the latest tag (ghcr.io/acme/web:latest): pin a version or a digest; nothing applied"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr has no %q:\n%s", want, r.stderr)
	}
	if !strings.Contains(r.stderr, "policy deny deny_latest_tag") || !strings.Contains(r.stderr, "policy: 1 deny, 1 warn") {
		t.Errorf("the plan on stderr shows no verdicts:\n%s", r.stderr)
	}
	// Nothing changed: neither object, nor the inventory.
	cs := clientset(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("configmap settings: %v, want not found", err)
	}
	if _, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("deployment web: %v, want not found", err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("inventory secret: %v, want not found", err)
	}
}

func TestPolicyInPlan(t *testing.T) {
	ns := env.Namespace(t)
	dir := manifests(t, ns, map[string]string{"app.yaml": latestApp})
	args := []string{"plan", dir, "--store", filepath.Join(t.TempDir(), "s.db"), "--name", ns, "--inventory-namespace", ns, "--policy", examplePolicies, "--color=never"}

	// Without --detailed-exitcode the verdicts are reported only.
	r := snapply(t, args...)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"; policy: 1 deny, 1 warn",
		"policy deny deny_latest_tag: Deployment/web: container web uses the latest tag",
		"policy warn warn_required_labels: Deployment/web: missing the label app.kubernetes.io/part-of",
		"Denied by policy: 1 object. Apply refuses to change anything",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in:\n%s", want, r.stdout)
		}
	}
	if r = snapply(t, append(args, "--detailed-exitcode")...); r.code != 1 || !strings.Contains(r.stderr, "denied by policy deny_latest_tag") {
		t.Errorf("--detailed-exitcode: exit %d, want 1\n%s", r.code, r.stderr)
	}

	r = snapply(t, append(args, "-o", "json")...)
	var out struct {
		Policy  struct{ Deny, Warn int } `json:"policy"`
		Changes []struct {
			Ref    struct{ Kind string } `json:"ref"`
			Policy []struct{ Rule, Level, Message string }
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Policy.Deny != 1 || out.Policy.Warn != 1 {
		t.Errorf("policy counts %+v", out.Policy)
	}
	for _, c := range out.Changes {
		if c.Ref.Kind == "ConfigMap" && (c.Policy == nil || len(c.Policy) != 0) {
			t.Errorf("configmap: policy %#v, want []", c.Policy)
		}
		if c.Ref.Kind == "Deployment" && (len(c.Policy) != 2 || c.Policy[0].Rule != "deny_latest_tag" || c.Policy[0].Level != "deny" || c.Policy[1].Level != "warn") {
			t.Errorf("deployment: policy %+v", c.Policy)
		}
	}
}

func TestPolicySyntaxErrorIsOneLine(t *testing.T) {
	ns := env.Namespace(t)
	dir := manifests(t, ns, map[string]string{"app.yaml": configMaps})
	pol := manifests(t, ns, map[string]string{"broken.rego": "package main\n\ndeny contains msg if {\n  msg := sprintf(\"%s\", [input.kind]\n}\n"})
	r := snapply(t, "plan", dir, "--store", filepath.Join(t.TempDir(), "s.db"), "--policy", pol)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	line := lastLine(r.stderr)
	if !strings.HasPrefix(line, "error: policy "+filepath.Join(pol, "broken.rego")+":") || strings.Count(r.stderr, "\nerror: ") != 1 {
		t.Errorf("stderr: %q", r.stderr)
	}
}

// TestPolicyDeleteRuleBlocksThePrune: a deny_delete rule stops the apply
// that would prune the object it protects, and nothing changes; the
// shipped rules, written for manifests, never judge a delete.
func TestPolicyDeleteRuleBlocksThePrune(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	both := `apiVersion: v1
kind: ConfigMap
metadata: {name: keep, namespace: NS, labels: {protect: "true"}}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other, namespace: NS}
data: {k: v}
`
	if r := applyIn(t, ns, db, manifests(t, ns, map[string]string{"cms.yaml": both}), "--wait=false"); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	policies := manifests(t, ns, map[string]string{"protect.rego": `package main

deny_delete contains msg if {
	input.metadata.labels.protect == "true"
	msg := sprintf("%s/%s is protected: remove its protect label first", [input.kind, input.metadata.name])
}
`})
	// Only "other" is left in git: "keep" would be pruned.
	dir := manifests(t, ns, map[string]string{"cms.yaml": strings.SplitN(both, "---\n", 2)[1]})
	r := snapply(t, "plan", dir, "--store", db, "--name", ns, "--inventory-namespace", ns, "--policy", policies, "-o", "json")
	var p struct {
		Changes []struct {
			Ref    struct{ Name string }
			Action string
			Policy []struct{ Rule, Level, Message string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("plan: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	var verdicts []string
	for _, c := range p.Changes {
		for _, v := range c.Policy {
			verdicts = append(verdicts, c.Ref.Name+" "+c.Action+" "+v.Level+" "+v.Rule+": "+v.Message)
		}
	}
	if want := "keep delete deny deny_delete: ConfigMap/keep is protected: remove its protect label first"; len(verdicts) != 1 || verdicts[0] != want {
		t.Errorf("plan verdicts %q, want [%s]", verdicts, want)
	}
	r = applyIn(t, ns, db, dir, "--policy", policies, "--wait=false")
	if want := "error: configmap/keep -n " + ns + ": denied by policy deny_delete: ConfigMap/keep is protected"; r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Fatalf("apply: exit %d, want 1 and %q\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	if _, err := clientset(t).CoreV1().ConfigMaps(ns).Get(context.Background(), "keep", metav1.GetOptions{}); err != nil {
		t.Errorf("the protected ConfigMap: %v", err)
	}
	// The shipped rules judge no delete.
	r = applyIn(t, ns, db, dir, "--policy", examplePolicies, "--wait=false")
	if r.code != 0 || !strings.Contains(r.stdout, "pruned") {
		t.Errorf("apply with the example policies: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
