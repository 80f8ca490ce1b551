package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestAdmissionPolicyDenialIsAPolicyDenial creates a
// ValidatingAdmissionPolicy in Deny mode for the test's namespace: the
// plan reports the object it refuses as a policy denial naming it.
func TestAdmissionPolicyDenialIsAPolicyDenial(t *testing.T) {
	ns := env.Namespace(t)
	name := "no-blocked-configmaps-" + ns
	admissionPolicy(t, ns, name, admissionv1.Deny)

	dir := manifests(t, ns, map[string]string{"cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: blocked, namespace: NS}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: fine, namespace: NS}
data: {k: v}
`})
	r := snapply(t, "plan", dir, "--store", filepath.Join(t.TempDir(), "s.db"), "--name", ns, "--inventory-namespace", ns, "--color=never")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range []string{
		"! configmap/blocked -n " + ns + " (invalid)",
		"; policy: 1 deny, 0 warn",
		"policy deny ValidatingAdmissionPolicy/" + name + ": configmaps may not be named blocked",
	} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("no %q in:\n%s", w, r.stdout)
		}
	}
	r = snapply(t, "plan", dir, "--store", filepath.Join(t.TempDir(), "s.db"), "--name", ns, "--inventory-namespace", ns, "-o", "json")
	if !strings.Contains(r.stdout, `"rule": "ValidatingAdmissionPolicy/`+name+`"`) || !strings.Contains(r.stdout, `"level": "deny"`) {
		t.Errorf("json:\n%s", r.stdout)
	}
}

// admissionPolicy creates a ValidatingAdmissionPolicy NAME, bound with
// action to the namespace ns, refusing (or warning about) ConfigMaps named
// "blocked", and waits until the API server enforces it.
func admissionPolicy(t *testing.T, ns, name string, action admissionv1.ValidationAction) {
	t.Helper()
	ctx := context.Background()
	cs := clientset(t)
	fail := admissionv1.Fail
	vap := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "object.metadata.name != 'blocked'", Message: "configmaps may not be named blocked"}},
		},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, vap, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{action},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns},
			}},
		},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// The API server takes the policy into account within a second or two:
	// a dry run is refused (Deny) or warned about (Warn).
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "blocked", Namespace: ns}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		warned := &warningRecorder{}
		cfg := rest.CopyConfig(env.Config)
		cfg.WarningHandler = warned
		dry, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = dry.CoreV1().ConfigMaps(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil || warned.seen() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the ValidatingAdmissionPolicy never took effect")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// warningRecorder is a rest.WarningHandler that remembers whether the
// server warned.
type warningRecorder struct {
	mu sync.Mutex
	n  int
}

// HandleWarningHeader implements rest.WarningHandler.
func (w *warningRecorder) HandleWarningHeader(code int, _, _ string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if code == 299 {
		w.n++
	}
}

func (w *warningRecorder) seen() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n > 0
}

// TestAdmissionPolicyWarnIsAPolicyWarning: a ValidatingAdmissionPolicy in
// Warn mode is a warn verdict naming it in the text, markdown, JSON and
// HTML plans, not a raw warning risk, and apply still applies the object.
func TestAdmissionPolicyWarnIsAPolicyWarning(t *testing.T) {
	ns := env.Namespace(t)
	name := "warn-blocked-configmaps-" + ns
	admissionPolicy(t, ns, name, admissionv1.Warn)
	dir := manifests(t, ns, map[string]string{"cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: blocked, namespace: NS}
data: {k: v}
`})
	db := filepath.Join(t.TempDir(), "s.db")
	r := snapply(t, "plan", dir, "--store", db, "--name", ns, "--inventory-namespace", ns, "--color=never", "--detailed-exitcode")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2 (changes, no deny)\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range []string{
		"+ configmap/blocked -n " + ns,
		"; policy: 0 deny, 1 warn",
		"policy warn ValidatingAdmissionPolicy/" + name + ": configmaps may not be named blocked",
	} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("no %q in:\n%s", w, r.stdout)
		}
	}
	for _, w := range []string{"risk warning", "Validation failed for"} {
		if strings.Contains(r.stdout, w) {
			t.Errorf("the verdict is also shown raw (%q):\n%s", w, r.stdout)
		}
	}
	r = snapply(t, "plan", dir, "--store", db, "--name", ns, "--inventory-namespace", ns, "-o", "markdown")
	if !strings.Contains(r.stdout, "| warn | `ValidatingAdmissionPolicy/"+name+"` | configmaps may not be named blocked |") || strings.Contains(r.stdout, "Validation failed for") {
		t.Errorf("markdown:\n%s", r.stdout)
	}
	r = snapply(t, "plan", dir, "--store", db, "--name", ns, "--inventory-namespace", ns, "-o", "json")
	for _, w := range []string{`"rule": "ValidatingAdmissionPolicy/` + name + `"`, `"level": "warn"`} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("no %s in json:\n%s", w, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "Validation failed for") {
		t.Errorf("json repeats the verdict as a warning:\n%s", r.stdout)
	}
	r = snapply(t, "plan", dir, "--store", db, "--name", ns, "--inventory-namespace", ns, "-o", "html")
	if !strings.Contains(r.stdout, "policy warn <code>ValidatingAdmissionPolicy/"+name+"</code>: configmaps may not be named blocked") {
		t.Errorf("the HTML plan does not show the verdict")
	}
	r = snapply(t, "apply", dir, "--store", db, "--name", ns, "--inventory-namespace", ns, "--color=never", "--wait=false")
	if r.code != 0 {
		t.Fatalf("apply: exit %d, want 0: a warn verdict does not block\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := clientset(t).CoreV1().ConfigMaps(ns).Get(context.Background(), "blocked", metav1.GetOptions{}); err != nil {
		t.Errorf("apply did not create the object: %v", err)
	}
}
