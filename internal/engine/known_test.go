package engine_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/store"
	"github.com/snapply/snapply/internal/testenv"
)

const configMaps = `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: NS}
data: {k: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: NS}
data: {k: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: NS}
data: {k: "1"}
`

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27.0"}]}
`

func clientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// namespaceOf returns the namespace of the test's objects of resource:
// none for cluster-scoped CRDs.
func namespaceOf(f *fixture, resource string) string {
	if resource == "customresourcedefinitions" {
		return ""
	}
	return f.ns
}

// wantKnown fails unless every object named is known unchanged and no
// request named it.
func wantKnown(t *testing.T, f *fixture, p *plan.Plan, resource string, names ...string) {
	t.Helper()
	for _, name := range names {
		c := change(t, p, name)
		if c.Action != plan.Unchanged || c.Verified != plan.VerifiedRecord {
			t.Errorf("%s: %s, verified %q; want unchanged from the record", name, c.Action, c.Verified)
		}
		if reqs := f.requests.naming(resource, namespaceOf(f, resource), name); len(reqs) != 0 {
			t.Errorf("%s: known, yet %d requests named it: %+v", name, len(reqs), reqs)
		}
	}
}

// wantDryRun fails unless the object named was dry-run and planned as
// action.
func wantDryRun(t *testing.T, f *fixture, p *plan.Plan, resource, name string, action plan.Action) plan.Change {
	t.Helper()
	c := change(t, p, name)
	if c.Action != action || c.Verified != plan.VerifiedDryRun {
		t.Errorf("%s: %s, verified %q; want %s by a dry run", name, c.Action, c.Verified, action)
	}
	dry := 0
	for _, r := range f.requests.naming(resource, namespaceOf(f, resource), name) {
		if r.dryRun {
			dry++
		}
	}
	if dry == 0 {
		t.Errorf("%s: no dry-run request named it", name)
	}
	return c
}

// After an apply, plan and apply send no request for an object nobody
// touched; whatever happened to another one, it is dry-run and reported
// as the server sees it.
func TestKnownObjectsAreNotDryRun(t *testing.T) {
	f := newFixture(t)
	f.write(map[string]string{"cm.yaml": configMaps, "deploy.yaml": deployment})
	f.apply()
	ctx := context.Background()
	cs := clientset(t)

	// Nothing moved: no dry run at all, in plan and in apply.
	p := f.plan(f.options())
	wantKnown(t, f, p, "configmaps", "a", "b", "c")
	wantKnown(t, f, p, "deployments", "web")
	if n := f.requests.dryRuns(); n != 0 {
		t.Errorf("plan sent %d dry runs, want 0", n)
	}
	if d, k := p.Verification(); d != 0 || k != 4 {
		t.Errorf("verification: %d dry runs, %d known; want 0, 4", d, k)
	}
	p = f.apply()
	wantKnown(t, f, p, "configmaps", "a", "b", "c")
	if n := f.requests.dryRuns(); n != 0 {
		t.Errorf("apply sent %d dry runs, want 0", n)
	}

	// kubectl edit: another manager updates a field snapply owns.
	cm, err := cs.CoreV1().ConfigMaps(f.ns).Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "edited"
	if _, err := cs.CoreV1().ConfigMaps(f.ns).Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	// Another manager force-applies a field snapply owns.
	forced := []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":%q},"data":{"k":"forced"}}`, f.ns))
	force := true
	if _, err := cs.CoreV1().ConfigMaps(f.ns).Patch(ctx, "b", types.ApplyPatchType, forced, metav1.PatchOptions{FieldManager: "other", Force: &force}); err != nil {
		t.Fatal(err)
	}
	// The status of the Deployment keeps changing (a controller's writes).
	for i := range 3 {
		d, err := cs.AppsV1().Deployments(f.ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: int32(i), UpdatedReplicas: int32(i)}
		if _, err := cs.AppsV1().Deployments(f.ns).UpdateStatus(ctx, d, metav1.UpdateOptions{FieldManager: "kube-controller-manager"}); err != nil {
			t.Fatal(err)
		}
	}
	// The desired object changes.
	f.write(map[string]string{"cm.yaml": strings.Replace(configMaps, "{name: c, namespace: NS}\ndata: {k: \"1\"}", "{name: c, namespace: NS}\ndata: {k: \"2\"}", 1)})

	p = f.plan(f.options())
	a := wantDryRun(t, f, p, "configmaps", "a", plan.Conflict)
	if len(a.Conflicts) != 1 || a.Conflicts[0].Manager != "kubectl-edit" || a.Conflicts[0].Field != ".data.k" {
		t.Errorf("a: conflicts %+v, want .data.k owned by kubectl-edit", a.Conflicts)
	}
	b := wantDryRun(t, f, p, "configmaps", "b", plan.Conflict)
	if len(b.Conflicts) != 1 || b.Conflicts[0].Manager != "other" || !strings.Contains(b.Diff, "forced") {
		t.Errorf("b: conflicts %+v, want .data.k owned by other, and a diff from the forced value:\n%s", b.Conflicts, b.Diff)
	}
	wantDryRun(t, f, p, "configmaps", "c", plan.Update)
	wantKnown(t, f, p, "deployments", "web")
	if d, k := p.Verification(); d != 3 || k != 1 {
		t.Errorf("verification: %d dry runs, %d known; want 3, 1", d, k)
	}

	// --revalidate dry-runs everything.
	o := f.options()
	o.Revalidate = true
	p = f.plan(o)
	wantDryRun(t, f, p, "deployments", "web", plan.Unchanged)
	if d, k := p.Verification(); d != 4 || k != 0 {
		t.Errorf("--revalidate: %d dry runs, %d known; want 4, 0", d, k)
	}
}

// Without the record of the last apply (a new store), every object is
// dry-run, and the plan says why.
func TestKnownNeedsTheRecord(t *testing.T) {
	f := newFixture(t)
	f.write(map[string]string{"cm.yaml": configMaps})
	f.apply()
	if err := os.Remove(f.store); err != nil {
		t.Fatal(err)
	}
	p := f.plan(f.options())
	for _, name := range []string{"a", "b", "c"} {
		wantDryRun(t, f, p, "configmaps", name, plan.Unchanged)
	}
	found := false
	for _, line := range f.progress {
		if strings.Contains(line, "every object is dry-run: the record of the last apply") {
			found = true
		}
	}
	if !found {
		t.Errorf("no progress line says why every object is dry-run:\n%s", strings.Join(f.progress, "\n"))
	}
}

// The record keeps what the known test compares: the managedFields
// digest of every object, the server version, the CRD generation.
func TestKnownRecord(t *testing.T) {
	f := newFixture(t)
	f.write(map[string]string{"cm.yaml": configMaps})
	f.apply()
	f.apply() // all known: the records are carried over
	db, err := store.Open(f.store, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.Runs()
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d runs (%v), want 2", len(runs), err)
	}
	cm, err := clientset(t).CoreV1().ConfigMaps(f.ns).Get(context.Background(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
	if err != nil {
		t.Fatal(err)
	}
	want := plan.AppliedFields(&unstructured.Unstructured{Object: m})
	if want == "" {
		t.Fatal("the live object has no entry of snapply")
	}
	for i, run := range runs {
		if run.ServerVersion == "" {
			t.Errorf("run %d: no server version", i)
		}
		for _, r := range run.Records {
			if r.Ref.Name == "a" && r.Fields != want {
				t.Errorf("run %d: a's fields %q, want %q (the live object's)", i, r.Fields, want)
			}
		}
	}
}

const crdTemplate = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"PLURAL.GROUP"},
"spec":{"group":"GROUP","scope":"Namespaced","names":{"plural":"PLURAL","singular":"SINGULAR","kind":"KIND","listKind":"KINDList"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer"}EXTRA}}}}}}]}}`

// A custom resource is known while its CRD keeps its generation; once the
// CRD's schema changes, it is dry-run again.
func TestKnownCustomResourceFollowsItsCRD(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	// A kind of its own per test run: CRDs are cluster-scoped.
	group := f.ns + ".example.com"
	crdJSON := func(extra string) []byte {
		return []byte(strings.NewReplacer("PLURAL", "gadgets", "SINGULAR", "gadget", "KIND", "Gadget", "GROUP", group, "EXTRA", extra).Replace(crdTemplate))
	}
	apply := func(body []byte) {
		t.Helper()
		force := true
		if _, err := crds.Patch(ctx, "gadgets."+group, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "platform-team", Force: &force}); err != nil {
			t.Fatal(err)
		}
	}
	apply(crdJSON(""))
	t.Cleanup(func() {
		_ = crds.Delete(context.Background(), "gadgets."+group, metav1.DeleteOptions{})
	})
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd, err := crds.Get(ctx, "gadgets."+group, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatal("the CRD is not Established")
	}
	f.write(map[string]string{"gadget.yaml": "apiVersion: " + group + "/v1\nkind: Gadget\nmetadata: {name: g, namespace: NS}\nspec: {size: 1}\n"})
	f.apply()
	p := f.plan(f.options())
	wantKnown(t, f, p, "gadgets", "g")

	// The schema changes: the generation moves.
	apply(crdJSON(`,"color":{"type":"string"}`))
	p = f.plan(f.options())
	wantDryRun(t, f, p, "gadgets", "g", plan.Unchanged)
}

// Deployments that controllers roll out, whose status keeps changing as
// their Pods come and go, stay known: status writes do not touch
// snapply's managedFields entry.
func TestKnownAcrossRollouts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server with controllers")
	}
	ctx := t.Context()
	e, err := testenv.Start(ctx, testenv.Options{Controllers: true})
	if err != nil {
		t.Fatalf("start with controllers: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	f := newFixtureIn(t, e)
	f.wait = true
	const n = 10
	var docs, names []string
	for i := range n {
		name := fmt.Sprintf("web-%02d", i)
		names = append(names, name)
		docs = append(docs, strings.ReplaceAll(deployment, "name: web,", "name: "+name+","))
	}
	f.write(map[string]string{"deploy.yaml": strings.Join(docs, "---\n")})
	f.apply() // waits until every Deployment is available

	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	for _, name := range names {
		d, err := cs.AppsV1().Deployments(f.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before[name] = d.ResourceVersion
	}
	// The Pods go; the ReplicaSets make new ones, and the Deployments'
	// status follows.
	if err := cs.CoreV1().Pods(f.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			d, err := cs.AppsV1().Deployments(f.ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil || d.ResourceVersion == before[name] || d.Status.AvailableReplicas != 2 {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatalf("the Deployments' status did not move and settle: %v", err)
	}
	p := f.plan(f.options())
	wantKnown(t, f, p, "deployments", names...)
	if n := f.requests.dryRuns(); n != 0 {
		t.Errorf("plan sent %d dry runs, want 0", n)
	}
}

// A CRD of the desired set that changes makes its custom resources worth a
// dry run too; applied together, both are known afterwards.
func TestKnownCRDInTheSet(t *testing.T) {
	f := newFixture(t)
	group := f.ns + ".example.org"
	crd := func(extra string) string {
		return strings.NewReplacer("PLURAL", "widgets", "SINGULAR", "widget", "KIND", "Widget", "GROUP", group, "EXTRA", extra).Replace(crdTemplate) + "\n"
	}
	cr := "---\napiVersion: " + group + "/v1\nkind: Widget\nmetadata: {name: w, namespace: NS}\nspec: {size: 1}\n"
	t.Cleanup(func() {
		dyn, err := dynamic.NewForConfig(env.Config)
		if err == nil {
			_ = dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
				Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
		}
	})
	f.write(map[string]string{"set.yaml": crd("") + cr})
	f.apply() // the Widget is pending in the plan, applied after the CRD
	p := f.plan(f.options())
	wantKnown(t, f, p, "customresourcedefinitions", "widgets."+group)
	wantKnown(t, f, p, "widgets", "w")

	f.write(map[string]string{"set.yaml": crd(`,"color":{"type":"string"}`) + cr})
	p = f.plan(f.options())
	wantDryRun(t, f, p, "customresourcedefinitions", "widgets."+group, plan.Update)
	wantDryRun(t, f, p, "widgets", "w", plan.Unchanged)
	f.apply()
	p = f.plan(f.options())
	wantKnown(t, f, p, "widgets", "w")
}
