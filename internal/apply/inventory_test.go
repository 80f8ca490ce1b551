package apply_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/version"
)

// kubectlID is kubectl's ApplySet.ID (k8s.io/kubectl/pkg/cmd/apply,
// applyset.go) as written there: the parent's name, namespace, kind and
// group joined by ".", hashed, base64url without padding.
func kubectlID(name, namespace, kind, group string) string {
	unencoded := strings.Join([]string{name, namespace, kind, group}, ".")
	hashed := sha256.Sum256([]byte(unencoded))
	b64 := base64.RawURLEncoding.EncodeToString(hashed[:])
	return fmt.Sprintf("applyset-%s-v1", b64)
}

func TestApplySetID(t *testing.T) {
	tests := []struct {
		name, namespace, want string
	}{
		// The value kubectl's own tests expect for the Secret my-set in
		// namespace test (apply_test.go, TestApplySetParentManagement).
		{"my-set", "test", "applyset-0eFHV8ySqp7XoShsGvyWFQD3s96yqwHmzc4e0HR1dsY-v1"},
		{"snapply", "default", kubectlID("snapply", "default", "Secret", "")},
		{"prod", "snapply-system", kubectlID("prod", "snapply-system", "Secret", "")},
		{"a.b", "c", kubectlID("a.b", "c", "Secret", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := apply.ApplySetID(tt.name, tt.namespace)
			if got != tt.want {
				t.Errorf("ApplySetID(%q, %q) = %q, want %q", tt.name, tt.namespace, got, tt.want)
			}
			if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
				t.Errorf("ApplySetID(%q, %q) = %q is not a label value: %v", tt.name, tt.namespace, got, errs)
			}
		})
	}
	if apply.ApplySetID("a", "b") == apply.ApplySetID("b", "a") {
		t.Error("ApplySetID does not tell name from namespace")
	}
}

func TestFormatGroupKinds(t *testing.T) {
	tests := []struct {
		name string
		in   []schema.GroupKind
		want string
	}{
		{"empty", nil, ""},
		{"core kinds have no group", []schema.GroupKind{{Kind: "ConfigMap"}}, "ConfigMap"},
		{
			"sorted, deduplicated",
			[]schema.GroupKind{
				{Group: "apps", Kind: "Deployment"}, {Kind: "Service"}, {Kind: "ConfigMap"},
				{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, {Group: "apps", Kind: "Deployment"},
			},
			"ClusterRole.rbac.authorization.k8s.io,ConfigMap,Deployment.apps,Service",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := apply.FormatGroupKinds(tt.in); got != tt.want {
				t.Errorf("FormatGroupKinds() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestInventorySaveLoad(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	ns, other := env.Namespace(t), env.Namespace(t)

	inv, err := apply.LoadInventory(ctx, c, "snapply", ns)
	if err != nil {
		t.Fatal(err)
	}
	want := &apply.Inventory{
		Name: "snapply", Namespace: ns, ID: apply.ApplySetID("snapply", ns),
		Tooling: "snapply/" + version.Version, Annotations: map[string]string{},
	}
	if diff := cmp.Diff(want, inv); diff != "" {
		t.Fatalf("LoadInventory() of a missing parent (-want +got):\n%s", diff)
	}

	inv.GroupKinds = []schema.GroupKind{{Group: "apps", Kind: "Deployment"}, {Kind: "ConfigMap"}}
	inv.Namespaces = []string{other, ns}
	inv.Annotations[apply.LastCommitAnnotation] = "0123abc"
	inv.Annotations[apply.LastRunAnnotation] = "https://github.com/o/r/actions/runs/1"
	if err := inv.Save(ctx, c); err != nil {
		t.Fatal(err)
	}

	got, err := apply.LoadInventory(ctx, c, "snapply", ns)
	if err != nil {
		t.Fatal(err)
	}
	want = &apply.Inventory{
		Name: "snapply", Namespace: ns, ID: apply.ApplySetID("snapply", ns),
		Tooling:    "snapply/" + version.Version,
		GroupKinds: []schema.GroupKind{{Kind: "ConfigMap"}, {Group: "apps", Kind: "Deployment"}},
		Namespaces: sortedStrings(ns, other),
		Annotations: map[string]string{
			apply.LastCommitAnnotation: "0123abc",
			apply.LastRunAnnotation:    "https://github.com/o/r/actions/runs/1",
		},
		Exists: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadInventory() after Save (-want +got):\n%s", diff)
	}

	// The parent as kubectl and other ApplySet tools read it.
	cs := clientset(t)
	sec, err := cs.CoreV1().Secrets(ns).Get(ctx, "snapply", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{apply.IDLabel: apply.ApplySetID("snapply", ns)}
	if diff := cmp.Diff(wantLabels, sec.Labels); diff != "" {
		t.Errorf("parent labels (-want +got):\n%s", diff)
	}
	wantAnnotations := map[string]string{
		apply.ToolingAnnotation:              "snapply/" + version.Version,
		apply.ContainsGroupKindsAnnotation:   "ConfigMap,Deployment.apps",
		apply.AdditionalNamespacesAnnotation: other,
		apply.LastCommitAnnotation:           "0123abc",
		apply.LastRunAnnotation:              "https://github.com/o/r/actions/runs/1",
	}
	if diff := cmp.Diff(wantAnnotations, sec.Annotations); diff != "" {
		t.Errorf("parent annotations (-want +got):\n%s", diff)
	}
	if len(sec.Data) != 0 {
		t.Errorf("parent holds data: keys %v", sortedKeys(sec.Data))
	}

	// A later Save owns the set as it is now: what it leaves out is gone.
	got.GroupKinds = []schema.GroupKind{{Kind: "ConfigMap"}}
	got.Namespaces = []string{ns}
	delete(got.Annotations, apply.LastRunAnnotation)
	if err := got.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	again, err := apply.LoadInventory(ctx, c, "snapply", ns)
	if err != nil {
		t.Fatal(err)
	}
	want.GroupKinds = []schema.GroupKind{{Kind: "ConfigMap"}}
	want.Namespaces = []string{ns}
	delete(want.Annotations, apply.LastRunAnnotation)
	if diff := cmp.Diff(want, again); diff != "" {
		t.Errorf("LoadInventory() after a second Save (-want +got):\n%s", diff)
	}
}

func TestInventorySaveMissingNamespace(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	missing := env.Namespace(t) + "-missing"
	inv, err := apply.LoadInventory(ctx, c, "snapply", missing)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Exists {
		t.Fatal("LoadInventory() in a missing namespace: Exists = true")
	}
	err = inv.Save(ctx, c)
	want := fmt.Sprintf("inventory %s/snapply: inventory namespace %q does not exist", missing, missing)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Save() = %v, want an error starting %q", err, want)
	}
	_, err = clientset(t).CoreV1().Namespaces().Get(ctx, missing, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after Save: %v, want it still missing", missing, err)
	}
}

func TestInventorySaveRefusesForeignAnnotations(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	ns := env.Namespace(t)
	inv, err := apply.LoadInventory(ctx, c, "snapply", ns)
	if err != nil {
		t.Fatal(err)
	}
	inv.Annotations[apply.ToolingAnnotation] = "kubectl/v1.36"
	if err := inv.Save(ctx, c); err == nil || !strings.Contains(err.Error(), "does not start with snapply.dev/") {
		t.Fatalf("Save() = %v, want a refusal of a non-snapply.dev/ annotation", err)
	}
}

func TestLoadInventoryRefusesToAdopt(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	cs := clientset(t)
	ns := env.Namespace(t)
	id := func(name string) string { return apply.ApplySetID(name, ns) }
	tests := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		want        string
	}{
		{
			name:        "kubectl",
			labels:      map[string]string{apply.IDLabel: id("kubectl")},
			annotations: map[string]string{apply.ToolingAnnotation: "kubectl/v1.36", apply.ContainsGroupKindsAnnotation: "ConfigMap"},
			want:        "inventory NS/kubectl: owned by kubectl/v1.36 (applyset.kubernetes.io/tooling), refusing to adopt it",
		},
		{
			name:        "nested-tool",
			labels:      map[string]string{apply.IDLabel: id("nested-tool")},
			annotations: map[string]string{apply.ToolingAnnotation: "snapply/fork/v1"},
			want:        "inventory NS/nested-tool: owned by snapply/fork/v1 (applyset.kubernetes.io/tooling), refusing to adopt it",
		},
		{
			name: "plain-secret",
			want: "inventory NS/plain-secret: secret exists and is not an ApplySet parent (no applyset.kubernetes.io/id label), refusing to adopt it",
		},
		{
			name:   "no-tooling",
			labels: map[string]string{apply.IDLabel: id("no-tooling")},
			want:   "inventory NS/no-tooling: ApplySet parent has no applyset.kubernetes.io/tooling annotation, refusing to adopt it",
		},
		{
			name:        "copied",
			labels:      map[string]string{apply.IDLabel: id("elsewhere")},
			annotations: map[string]string{apply.ToolingAnnotation: "snapply/v1.0.0"},
			want:        fmt.Sprintf("inventory NS/copied: applyset.kubernetes.io/id label is %q, want %q (a copy of another inventory?), refusing to adopt it", id("elsewhere"), id("copied")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sec := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: tt.name, Labels: tt.labels, Annotations: tt.annotations},
				StringData: map[string]string{"password": "hunter2-value"},
			}
			if _, err := cs.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			inv, err := apply.LoadInventory(ctx, c, tt.name, ns)
			if err == nil {
				t.Fatalf("LoadInventory() = %+v, want an error", inv)
			}
			if diff := cmp.Diff(strings.Replace(tt.want, "inventory NS/", "inventory "+ns+"/", 1), err.Error()); diff != "" {
				t.Errorf("LoadInventory() error (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("LoadInventory() error shows the secret's data: %v", err)
			}
		})
	}
}

func TestInventoryMembers(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	ns, other, outside := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	inv, err := apply.LoadInventory(ctx, c, "snapply", ns)
	if err != nil {
		t.Fatal(err)
	}
	inv.GroupKinds = []schema.GroupKind{
		{Kind: "ConfigMap"},
		{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"},
		{Group: "example.com", Kind: "Gone"}, // a CRD deleted since
	}
	inv.Namespaces = []string{ns, other}
	if err := inv.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	clusterRole := "snapply-members-" + ns

	desired := []*unstructured.Unstructured{
		invConfigMap(ns, "web", map[string]string{"app": "web"}),
		invConfigMap(other, "api", nil),
		invClusterRole(clusterRole),
	}
	for _, u := range desired {
		inv.Label(u)
	}
	if got := desired[0].GetLabels(); got["app"] != "web" || got[apply.PartOfLabel] != inv.ID {
		t.Errorf("Label() left labels %v, want app=web kept and %s=%s", got, apply.PartOfLabel, inv.ID)
	}
	unlabelled := []*unstructured.Unstructured{
		invConfigMap(other, "web", nil),   // same name as a member, in a member namespace
		invConfigMap(outside, "web", nil), // same name, in a namespace not in the set
		invConfigMap(ns, "unrelated", nil),
	}
	for _, u := range slices.Concat(desired, unlabelled) {
		invApply(t, c, u)
	}
	t.Cleanup(func() {
		_ = clientset(t).RbacV1().ClusterRoles().Delete(context.Background(), clusterRole, metav1.DeleteOptions{})
	})

	members, err := inv.Members(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"configmap/web -n " + ns,
		"configmap/api -n " + other,
		"clusterrole.rbac.authorization.k8s.io/" + clusterRole,
	}
	if diff := cmp.Diff(sortedStrings(want...), sortedStrings(invRefs(members)...)); diff != "" {
		t.Errorf("Members() (-want +got):\n%s", diff)
	}

	// What `kubectl get configmaps,clusterroles -A -l part-of=ID` shows.
	selector := apply.PartOfLabel + "=" + inv.ID
	var listed []*unstructured.Unstructured
	for _, gvr := range []schema.GroupVersionResource{
		{Version: "v1", Resource: "configmaps"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	} {
		l, err := c.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.Items {
			listed = append(listed, &l.Items[i])
		}
	}
	if diff := cmp.Diff(sortedStrings(want...), sortedStrings(invRefs(listed)...)); diff != "" {
		t.Errorf("LIST -A -l %s (-want +got):\n%s", selector, diff)
	}
}

// TestKubectlReadsInventory checks the parent against the kubectl binary,
// when there is one: kubectl finds the members by the ID snapply computes,
// and kubectl's own ApplySet parent, created by kubectl apply --applyset,
// carries that ID and is refused by LoadInventory.
func TestKubectlReadsInventory(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl on PATH")
	}
	ctx := context.Background()
	c := newClient(t)
	ns := env.Namespace(t)
	run := func(extraEnv []string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", env.Kubeconfig, "-n", ns}, args...)...)
		cmd.Env = append(os.Environ(), extraEnv...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	inv, err := apply.LoadInventory(ctx, c, "snapply", ns)
	if err != nil {
		t.Fatal(err)
	}
	inv.GroupKinds = []schema.GroupKind{{Kind: "ConfigMap"}}
	if err := inv.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	cm := invConfigMap(ns, "member", nil)
	inv.Label(cm)
	invApply(t, c, cm)
	invApply(t, c, invConfigMap(ns, "stranger", nil))
	if got := run(nil, "get", "configmaps", "-A", "-l", apply.PartOfLabel+"="+inv.ID, "-o", "name"); got != "configmap/member\n" {
		t.Errorf("kubectl get -l part-of=ID: %q, want %q", got, "configmap/member\n")
	}

	manifest := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: by-kubectl\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run([]string{"KUBECTL_APPLYSET=true"}, "apply", "--server-side", "--prune", "--applyset=secret/by-kubectl", "-f", manifest)
	sec, err := clientset(t).CoreV1().Secrets(ns).Get(ctx, "by-kubectl", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sec.Labels[apply.IDLabel], apply.ApplySetID("by-kubectl", ns); got != want {
		t.Errorf("kubectl's parent has ID %q, ApplySetID() = %q", got, want)
	}
	_, err = apply.LoadInventory(ctx, c, "by-kubectl", ns)
	if err == nil || !strings.Contains(err.Error(), ": owned by kubectl/") {
		t.Errorf("LoadInventory() of kubectl's parent = %v, want a refusal naming kubectl", err)
	}
}

func invConfigMap(ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"data": map[string]any{"k": "v"},
	}}
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

func invClusterRole(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": rbacv1.SchemeGroupVersion.String(), "kind": "ClusterRole",
		"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get"}}},
	}}
	u.SetName(name)
	return u
}

// applyObj server-side applies u as snapply.
func invApply(t *testing.T, c *kube.Client, u *unstructured.Unstructured) {
	t.Helper()
	m, err := c.Mapping(u.GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(context.Background(), u, m, kube.ApplyOptions{}); err != nil {
		t.Fatalf("apply %s: %v", object.RefOf(u), err)
	}
}

func invRefs(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, object.RefOf(o).String())
	}
	return out
}

func sortedStrings(s ...string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
