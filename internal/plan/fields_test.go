package plan_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/secret"
	"github.com/snapply/snapply/internal/snapshot"
)

// analyzed runs the pipeline the CLI runs: prepare, snapshot, plan, then
// the analysis pass with the server's schemas.
func analyzed(t *testing.T, c *kube.Client, desired []object.Object) *plan.Plan {
	t.Helper()
	return analyzedPrune(t, c, desired, nil)
}

// analyzedPrune is analyzed with a prune set.
func analyzedPrune(t *testing.T, c *kube.Client, desired []object.Object, prune []object.Ref) *plan.Plan {
	t.Helper()
	ctx := context.Background()
	if err := plan.Prepare(desired, c, "default"); err != nil {
		t.Fatal(err)
	}
	refs := append([]object.Ref(nil), prune...)
	for _, d := range desired {
		refs = append(refs, d.Ref)
	}
	live, err := snapshot.Capture(ctx, c, refs, snapshot.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	opts := plan.DefaultOptions()
	opts.Redact = secret.NewRedactor([]byte("test-key")).Redact
	p, err := plan.Compute(ctx, c, plan.Input{Desired: desired, Live: live.Index(), Prune: prune}, opts)
	if err != nil {
		t.Fatal(err)
	}
	plan.Analyze(p, plan.AnalyzeOptions{Schemas: c, Live: live.Index(), Redact: opts.Redact,
		Covered: snapshot.Covered(snapshot.ScopeNamespaces, refs, live.Skipped)})
	return p
}

const twoContainers = `apiVersion: apps/v1
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
        env:
        - {name: MODE, value: prod}
        ports:
        - {containerPort: 80}
        - {containerPort: 8080}
      - name: sidecar
        image: busybox:1.36
        command: [sleep, infinity]`

// TestFieldDiffMatchesListItemsByKey reorders the containers, adds an env
// var and changes a port: only those show, named by key.
func TestFieldDiffMatchesListItemsByKey(t *testing.T) {
	c := client(t)
	ns := env.Namespace(t)
	apply(t, c, kube.FieldManager, objects(t, ns, twoContainers))

	p := analyzed(t, c, objects(t, ns, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: sidecar
        image: busybox:1.36
        command: [sleep, infinity]
      - name: web
        image: nginx:1.27.3
        env:
        - {name: MODE, value: prod}
        - {name: LOG_LEVEL, value: debug}
        ports:
        - {containerPort: 80}
        - {containerPort: 9090}`))
	dep := find(t, p, "deployment.apps/web -n "+ns)
	if dep.Action != plan.Update {
		t.Fatalf("action %s, want update", dep.Action)
	}
	const web = "spec.template.spec.containers[name=web]"
	want := []plan.FieldDiff{
		{Path: web + ".env[name=LOG_LEVEL]", Op: plan.FieldAdd, After: `{"name":"LOG_LEVEL","value":"debug"}`},
		{Path: web + ".image", Op: plan.FieldChange, Before: "nginx:1.27.0", After: "nginx:1.27.3"},
		{Path: web + ".ports[containerPort=8080,protocol=TCP]", Op: plan.FieldRemove, Before: `{"containerPort":8080,"protocol":"TCP"}`},
		{Path: web + ".ports[containerPort=9090,protocol=TCP]", Op: plan.FieldAdd, After: `{"containerPort":9090,"protocol":"TCP"}`},
	}
	if diff := cmp.Diff(want, dep.Fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

const listMapCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: routes.NS.example.com}
spec:
  group: NS.example.com
  scope: Namespaced
  names: {kind: Route, plural: routes, singular: route, listKind: RouteList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              backends:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [host, port]
                items:
                  type: object
                  required: [host, port]
                  properties:
                    host: {type: string}
                    port: {type: integer}
                    weight: {type: integer}`

// TestFieldDiffCustomResourceListMapKeys takes the keys of a custom
// resource's list from its CRD schema, as the server publishes it.
func TestFieldDiffCustomResourceListMapKeys(t *testing.T) {
	c := client(t)
	ns := env.Namespace(t)
	apply(t, c, kube.FieldManager, objects(t, ns, listMapCRD))
	gv := schema.GroupVersion{Group: ns + ".example.com", Version: "v1"}
	// The server publishes a new CRD's schema within a few seconds; a
	// fresh client sees it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		c = client(t)
		if _, err := c.TypeConverter(gv); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("schema of %s not published: %v", gv, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	const route = `apiVersion: NS.example.com/v1
kind: Route
metadata: {name: r1, namespace: NS}
spec:
  backends:
`
	apply(t, c, kube.FieldManager, objects(t, ns, route+`  - {host: a, port: 80, weight: 1}
  - {host: b, port: 80, weight: 1}
  - {host: b, port: 81, weight: 1}`))
	p := analyzed(t, c, objects(t, ns, route+`  - {host: b, port: 81, weight: 1}
  - {host: b, port: 80, weight: 5}
  - {host: a, port: 80, weight: 1}`))
	r := find(t, p, "route."+ns+".example.com/r1 -n "+ns)
	want := []plan.FieldDiff{{Path: "spec.backends[host=b,port=80].weight", Op: plan.FieldChange, Before: "1", After: "5"}}
	if diff := cmp.Diff(want, r.Fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}
