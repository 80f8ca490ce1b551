package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAdmissionPolicyDenialIsAPolicyDenial creates a
// ValidatingAdmissionPolicy in Deny mode for the test's namespace: the
// plan reports the object it refuses as a policy denial naming it.
func TestAdmissionPolicyDenialIsAPolicyDenial(t *testing.T) {
	ns := env.Namespace(t)
	ctx := context.Background()
	cs := clientset(t)
	name := "no-blocked-configmaps-" + ns
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
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
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
	// The API server takes the policy into account within a second or two.
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "blocked", Namespace: ns}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ValidatingAdmissionPolicy never took effect")
		}
		time.Sleep(200 * time.Millisecond)
	}

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
