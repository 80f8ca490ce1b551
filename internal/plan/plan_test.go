package plan_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/secret"
	"github.com/snapply/snapply/internal/snapshot"
	"github.com/snapply/snapply/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func client(t testing.TB) *kube.Client {
	t.Helper()
	c, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// objects parses a YAML stream written for namespace ns (NS in the text).
func objects(t testing.TB, ns, stream string) []object.Object {
	t.Helper()
	var out []object.Object
	for i, doc := range strings.Split(strings.ReplaceAll(stream, "NS", ns), "\n---\n") {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("doc %d: %v", i, err)
		}
		u := &unstructured.Unstructured{Object: m}
		out = append(out, object.Object{Ref: object.RefOf(u), Source: object.Source{File: "test.yaml", Line: i + 1}, Obj: u})
	}
	return out
}

// apply really applies objs as manager.
func apply(t testing.TB, c *kube.Client, manager string, objs []object.Object) {
	t.Helper()
	for _, o := range objs {
		m, err := c.Mapping(o.Ref.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Apply(context.Background(), o.Obj, m, kube.ApplyOptions{FieldManager: manager}); err != nil {
			t.Fatalf("apply %s: %v", o.Ref, err)
		}
	}
}

// compute runs the pipeline the CLI runs: prepare, snapshot, plan.
func compute(t *testing.T, c *kube.Client, desired []object.Object, opts plan.Options) *plan.Plan {
	t.Helper()
	ctx := context.Background()
	if err := plan.Prepare(desired, c, "default"); err != nil {
		t.Fatal(err)
	}
	refs := make([]object.Ref, len(desired))
	for i, d := range desired {
		refs[i] = d.Ref
	}
	live, err := snapshot.Capture(ctx, c, refs, snapshot.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if opts.Redact == nil {
		opts.Redact = secret.NewRedactor([]byte("test-key")).Redact
	}
	p, err := plan.Compute(ctx, c, plan.Input{Desired: desired, Live: live.Index()}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func actions(p *plan.Plan) map[string]plan.Action {
	out := map[string]plan.Action{}
	for _, c := range p.Changes {
		out[c.Ref.String()] = c.Action
	}
	return out
}

func find(t *testing.T, p *plan.Plan, ref string) plan.Change {
	t.Helper()
	for _, c := range p.Changes {
		if c.Ref.String() == ref {
			return c
		}
	}
	t.Fatalf("plan has no change for %s", ref)
	return plan.Change{}
}

const app = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS}
data: {color: blue, size: large}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27.0`

func TestCreateUpdateUnchanged(t *testing.T) {
	c := client(t)
	ns := env.Namespace(t)

	p := compute(t, c, objects(t, ns, app), plan.DefaultOptions())
	want := map[string]plan.Action{
		"configmap/settings -n " + ns:  plan.Create,
		"deployment.apps/web -n " + ns: plan.Create,
	}
	if diff := cmp.Diff(want, actions(p)); diff != "" {
		t.Fatalf("first plan (-want +got):\n%s", diff)
	}
	if d := find(t, p, "configmap/settings -n "+ns).Diff; !strings.Contains(d, "+  color: blue") {
		t.Errorf("create diff lacks the data:\n%s", d)
	}
	if got := find(t, p, "deployment.apps/web -n "+ns).Images; !cmp.Equal(got, []plan.ImageChange{{Container: "web", New: "nginx:1.27.0"}}) {
		t.Errorf("create images = %v", got)
	}

	apply(t, c, kube.FieldManager, objects(t, ns, app))
	p = compute(t, c, objects(t, ns, app), plan.DefaultOptions())
	if p.Summary.Unchanged != 2 || p.HasChanges() {
		t.Fatalf("plan after apply: summary %+v, want 2 unchanged", p.Summary)
	}
	for _, ch := range p.Changes {
		if ch.LiveResourceVersion == "" {
			t.Errorf("%s: no live resourceVersion recorded", ch.Ref)
		}
		if ch.Diff != "" {
			t.Errorf("%s: unchanged object has a diff:\n%s", ch.Ref, ch.Diff)
		}
	}

	changed := strings.Replace(strings.Replace(app, "color: blue", "color: green", 1), "nginx:1.27.0", "nginx:1.27.3", 1)
	p = compute(t, c, objects(t, ns, changed), plan.DefaultOptions())
	cm := find(t, p, "configmap/settings -n "+ns)
	if cm.Action != plan.Update {
		t.Fatalf("configmap action = %s, want update", cm.Action)
	}
	for _, line := range []string{"-  color: blue", "+  color: green"} {
		if !strings.Contains(cm.Diff, line) {
			t.Errorf("update diff lacks %q:\n%s", line, cm.Diff)
		}
	}
	for _, noise := range []string{"managedFields", "resourceVersion", "uid:", "creationTimestamp"} {
		if strings.Contains(cm.Diff, noise) {
			t.Errorf("update diff shows server-managed %s:\n%s", noise, cm.Diff)
		}
	}
	dep := find(t, p, "deployment.apps/web -n "+ns)
	if diff := cmp.Diff([]plan.ImageChange{{Container: "web", Old: "nginx:1.27.0", New: "nginx:1.27.3"}}, dep.Images); dep.Action != plan.Update || diff != "" {
		t.Errorf("deployment: action %s, images (-want +got):\n%s", dep.Action, diff)
	}
}

func TestConflict(t *testing.T) {
	c := client(t)
	ns := env.Namespace(t)
	apply(t, c, kube.FieldManager, objects(t, ns, app))

	// Someone scales the Deployment by hand, the way `kubectl edit` does:
	// an update (not an apply) with another field manager.
	ctx := context.Background()
	deps := c.Dynamic.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(ns)
	live, err := deps.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(live.Object, int64(5), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if _, err := deps.Update(ctx, live, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}

	desired := strings.Replace(app, "replicas: 2", "replicas: 3", 1)
	p := compute(t, c, objects(t, ns, desired), plan.DefaultOptions())
	ch := find(t, p, "deployment.apps/web -n "+ns)
	if ch.Action != plan.Conflict {
		t.Fatalf("action = %s, want conflict", ch.Action)
	}
	if diff := cmp.Diff([]plan.FieldConflict{{Field: ".spec.replicas", Manager: "kubectl-edit"}}, ch.Conflicts); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
	if !strings.Contains(ch.Message, plan.ForceAnnotation) || !strings.Contains(ch.Message, "--force-conflicts") {
		t.Errorf("message does not give the ways out: %s", ch.Message)
	}
	if !strings.Contains(ch.Diff, "-  replicas: 5") || !strings.Contains(ch.Diff, "+  replicas: 3") {
		t.Errorf("conflict diff does not show what forcing changes:\n%s", ch.Diff)
	}
	if !p.HasErrors() {
		t.Error("a plan with a conflict must report errors")
	}

	// The annotation forces this object only.
	forced := strings.Replace(desired, "metadata: {name: web, namespace: NS}",
		"metadata: {name: web, namespace: NS, annotations: {snapply.dev/force-conflicts: \"true\"}}", 1)
	p = compute(t, c, objects(t, ns, forced), plan.DefaultOptions())
	ch = find(t, p, "deployment.apps/web -n "+ns)
	if ch.Action != plan.Update || len(ch.Conflicts) != 1 {
		t.Errorf("forced: action %s conflicts %v, want update listing the taken field", ch.Action, ch.Conflicts)
	}
}

func TestInvalid(t *testing.T) {
	c := client(t)
	ns := env.Namespace(t)
	apply(t, c, kube.FieldManager, objects(t, ns, `apiVersion: v1
kind: ConfigMap
metadata: {name: frozen, namespace: NS}
immutable: true
data: {a: "1"}`))

	p := compute(t, c, objects(t, ns, `apiVersion: v1
kind: ConfigMap
metadata: {name: unknown-field, namespace: NS}
spec: {oops: true}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: frozen, namespace: NS}
immutable: true
data: {a: "2"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: wrong-type, namespace: NS}
spec:
  replicas: "three"
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec: {containers: [{name: x, image: x}]}
---
apiVersion: example.com/v1
kind: Gizmo
metadata: {name: nope, namespace: NS}`), plan.DefaultOptions())

	for ref, want := range map[string]string{
		"configmap/unknown-field -n " + ns:    ".spec: field not declared in schema",
		"configmap/frozen -n " + ns:           "field is immutable",
		"deployment.apps/wrong-type -n " + ns: "replicas",
		"gizmo.example.com/nope -n " + ns:     "does not serve Gizmo in example.com/v1",
	} {
		ch := find(t, p, ref)
		if ch.Action != plan.Invalid || !strings.Contains(ch.Message, want) {
			t.Errorf("%s: action %s message %q, want invalid with %q", ref, ch.Action, ch.Message, want)
		}
		if ch.Source.File != "test.yaml" {
			t.Errorf("%s: source %v, want the file", ref, ch.Source)
		}
		if strings.Contains(ch.Message, "\n") {
			t.Errorf("%s: message is not one line: %q", ref, ch.Message)
		}
	}
	if p.Summary.Invalid != 4 {
		t.Errorf("summary %+v, want 4 invalid", p.Summary)
	}
}

func TestPending(t *testing.T) {
	c := client(t)
	ns := env.Namespace(t) // exists; "NS-new" does not
	p := compute(t, c, objects(t, ns, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.NS.example.com}
spec:
  group: NS.example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: NS.example.com/v1
kind: Widget
metadata: {name: w1, namespace: NS}
spec: {size: 3}
---
apiVersion: v1
kind: Namespace
metadata: {name: NS-new}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: inside, namespace: NS-new}
data: {a: b}`), plan.DefaultOptions())

	want := map[string]plan.Action{
		"customresourcedefinition.apiextensions.k8s.io/widgets." + ns + ".example.com": plan.Create,
		"widget." + ns + ".example.com/w1 -n " + ns:                                    plan.Pending,
		"namespace/" + ns + "-new":                                                     plan.Create,
		"configmap/inside -n " + ns + "-new":                                           plan.Pending,
	}
	if diff := cmp.Diff(want, actions(p)); diff != "" {
		t.Fatalf("actions (-want +got):\n%s", diff)
	}
	if m := find(t, p, "widget."+ns+".example.com/w1 -n "+ns).Message; !strings.Contains(m, "CustomResourceDefinition") {
		t.Errorf("pending CR message = %q", m)
	}
	if d := find(t, p, "configmap/inside -n "+ns+"-new").Diff; !strings.Contains(d, "+  a: b") {
		t.Errorf("pending object diff does not show it:\n%s", d)
	}
}

func TestSecretValuesNeverInPlan(t *testing.T) {
	c := client(t)
	ns := env.Namespace(t)
	const v1, v2 = "hunter2-first-value", "hunter2-second-value"
	apply(t, c, kube.FieldManager, objects(t, ns, `apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: NS}
stringData: {password: `+v1+`}`))
	p := compute(t, c, objects(t, ns, `apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: NS}
stringData: {password: `+v2+`, token: new-token-value}`), plan.DefaultOptions())
	ch := find(t, p, "secret/creds -n "+ns)
	if ch.Action != plan.Update {
		t.Fatalf("action = %s, want update", ch.Action)
	}
	for _, v := range secret.Values(objects(t, ns, "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\nstringData: {a: "+v1+", b: "+v2+", c: new-token-value}")[0].Obj) {
		if strings.Contains(ch.Diff, v) || strings.Contains(ch.Message, v) {
			t.Errorf("plan shows a secret value %q:\n%s", v, ch.Diff)
		}
	}
	if !strings.Contains(ch.Diff, "password:") || !strings.Contains(ch.Diff, "token:") {
		t.Errorf("diff should still say which keys changed:\n%s", ch.Diff)
	}
}

func TestPrepareNamespaces(t *testing.T) {
	c := client(t)
	cases := []struct {
		name, doc, defaultNS, wantNS, wantErr string
		objectNS                              string // the object's DefaultNamespace (a chart's release namespace)
		byKustomize                           bool   // the object's NamespaceByKustomize
	}{
		{"defaulted", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}", "team", "team", "", "", false},
		{"no default", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}", "", "", "no metadata.namespace and no default namespace", "", false},
		{"cluster-scoped with namespace", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: a, namespace: x}", "", "", "cluster-scoped object has metadata.namespace", "", false},
		{"cluster-scoped", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: a}", "team", "", "", "", false},
		{name: "release namespace first", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}", defaultNS: "team", wantNS: "release", objectNS: "release"},
		{name: "release namespace, no default", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}", wantNS: "release", objectNS: "release"},
		{name: "cluster-scoped from a chart", doc: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: a}", objectNS: "release"},
		{name: "cluster-scoped, namespace from a kustomization", doc: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: a, namespace: x}", byKustomize: true},
		{name: "namespaced, namespace from a kustomization", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}", defaultNS: "team", wantNS: "x", byKustomize: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := objects(t, "x", tc.doc)
			objs[0].DefaultNamespace = tc.objectNS
			objs[0].NamespaceByKustomize = tc.byKustomize
			err := plan.Prepare(objs, c, tc.defaultNS)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "test.yaml") {
					t.Fatalf("err = %v, want %q naming the file", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if objs[0].Ref.Namespace != tc.wantNS || objs[0].Obj.GetNamespace() != tc.wantNS {
				t.Errorf("namespace = %q/%q, want %q", objs[0].Ref.Namespace, objs[0].Obj.GetNamespace(), tc.wantNS)
			}
		})
	}
}
