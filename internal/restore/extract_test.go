package restore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/restore"
)

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// obj decodes YAML into an object with JSON's types (int64 for integers).
func obj(t *testing.T, ns, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(strings.ReplaceAll(y, "NS", ns)))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

// applyAs server-side applies u as manager, or only dry-runs it.
func applyAs(t *testing.T, dc dynamic.Interface, u *unstructured.Unstructured, manager string, dryRun bool) *unstructured.Unstructured {
	t.Helper()
	data, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	opts := metav1.PatchOptions{FieldManager: manager}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	out, err := dc.Resource(deployments).Namespace(u.GetNamespace()).Patch(context.Background(), u.GetName(), types.ApplyPatchType, data, opts)
	if err != nil {
		t.Fatalf("apply as %s: %v", manager, err)
	}
	return out
}

const alphaConfig = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: NS
  labels: {app: web, owner: alpha}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27.0
        ports:
        - {name: http, containerPort: 80}
        env:
        - {name: A, value: "1"}
`

const betaConfig = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: NS
  labels: {team: beta}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: web
        env:
        - {name: B, value: "2"}
      - name: sidecar
        image: busybox:1.37
`

// TestExtractOwnedLive applies one Deployment with two field managers and
// extracts what each owns from the managedFields the API server wrote.
func TestExtractOwnedLive(t *testing.T) {
	ns := env.Namespace(t)
	dc, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	applyAs(t, dc, obj(t, ns, alphaConfig), "alpha", false)
	live := applyAs(t, dc, obj(t, ns, betaConfig), "beta", false)

	// What each applied, plus the key fields of the list items it owns
	// (protocol: TCP, defaulted by the server, keys the ports).
	wantAlpha := obj(t, ns, alphaConfig)
	ports := []any{map[string]any{"name": "http", "containerPort": int64(80), "protocol": "TCP"}}
	containers, _, _ := unstructured.NestedSlice(wantAlpha.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["ports"] = ports
	unstructured.SetNestedSlice(wantAlpha.Object, containers, "spec", "template", "spec", "containers")
	wantBeta := obj(t, ns, betaConfig)

	for _, tt := range []struct {
		manager string
		want    *unstructured.Unstructured
	}{{"alpha", wantAlpha}, {"beta", wantBeta}} {
		t.Run(tt.manager, func(t *testing.T) {
			got, err := restore.ExtractOwned(live, tt.manager)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want.Object, got.Object); diff != "" {
				t.Errorf("ExtractOwned(%s) mismatch (-want +got):\n%s", tt.manager, diff)
			}
			// Applied again as the same manager, what it owned changes
			// nothing.
			again := applyAs(t, dc, got, tt.manager, true)
			for _, path := range [][]string{{"spec"}, {"metadata", "labels"}} {
				want, _, _ := unstructured.NestedFieldNoCopy(live.Object, path...)
				gotV, _, _ := unstructured.NestedFieldNoCopy(again.Object, path...)
				if diff := cmp.Diff(want, gotV); diff != "" {
					t.Errorf("re-applying the extracted %s changed .%s (-want +got):\n%s", tt.manager, strings.Join(path, "."), diff)
				}
			}
		})
	}

	got, err := restore.ExtractOwned(live, "nobody")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": ns}}
	if diff := cmp.Diff(want, got.Object); diff != "" {
		t.Errorf("ExtractOwned(nobody) mismatch (-want +got):\n%s", diff)
	}
}

// TestExtractOwned covers the parts of the fieldsV1 format the live test
// does not reach: set values, indexes, several entries, other operations
// and subresources, malformed entries.
func TestExtractOwned(t *testing.T) {
	base := func(managed string) *unstructured.Unstructured {
		return obj(t, "ns", `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: NS
  labels: {a: "1", b: "2"}
  finalizers: [example.com/one, example.com/two]
  managedFields: `+managed+`
spec:
  args: [x, y, z]
  nested: {keep: {deep: true}, drop: 1}
  ports:
  - {port: 80, protocol: TCP, name: http}
  - {port: 80, protocol: UDP, name: dns}
status: {phase: Ready}
`)
	}
	identity := `apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: ns}
`
	tests := []struct {
		name    string
		managed string
		secret  bool
		want    string
		wantErr string
	}{
		{
			name:   "a Secret's stringData keys are taken from data",
			secret: true,
			managed: `[{manager: m, operation: Apply, fieldsType: FieldsV1, fieldsV1: {
  "f:data": {"f:tok": {}}, "f:stringData": {"f:pw": {}}}}]`,
			want: `apiVersion: v1
kind: Secret
metadata: {name: w, namespace: ns}
data: {pw: aGVsbG8=, tok: d29ybGQ=}
`,
		},
		{
			name: "set values and indexes",
			managed: `[{manager: m, operation: Apply, fieldsType: FieldsV1, fieldsV1: {
  "f:metadata": {"f:finalizers": {".": {}, "v:\"example.com/two\"": {}}},
  "f:spec": {"f:args": {"i:2": {}}}}}]`,
			want: `apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: ns, finalizers: [example.com/two]}
spec: {args: [z]}
`,
		},
		{
			name: "list item keyed by two fields, a number among them",
			managed: `[{manager: m, operation: Apply, fieldsType: FieldsV1, fieldsV1: {
  "f:spec": {"f:ports": {"k:{\"port\":80,\"protocol\":\"UDP\"}": {".": {}, "f:name": {}}}}}}]`,
			want: identity + `spec:
  ports: [{port: 80, protocol: UDP, name: dns}]
`,
		},
		{
			name: "a node owned without children is taken whole; entries merge",
			managed: `[{manager: m, operation: Apply, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:nested": {"f:keep": {}}}}},
 {manager: m, operation: Apply, apiVersion: example.com/v1beta1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {"f:b": {}}}}}]`,
			want: `apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: ns, labels: {b: "2"}}
spec: {nested: {keep: {deep: true}}}
`,
		},
		{
			name: "updates, other managers and the status subresource are not the manager's apply",
			managed: `[{manager: m, operation: Update, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:args": {}}}},
 {manager: other, operation: Apply, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {"f:a": {}}}}},
 {manager: m, operation: Apply, subresource: status, fieldsType: FieldsV1, fieldsV1: {"f:status": {"f:phase": {}}}}]`,
			want: identity,
		},
		{
			name:    "a list item key that is not JSON",
			managed: `[{manager: m, operation: Apply, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:ports": {"k:{port": {}}}}}]`,
			wantErr: `widget.example.com/w -n ns: managed fields of m: .spec.ports: "k:{port": bad list item key`,
		},
		{
			name:    "a map key without f:",
			managed: `[{manager: m, operation: Apply, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:nested": {"x": {}}}}}]`,
			wantErr: `widget.example.com/w -n ns: managed fields of m: .spec.nested: "x" in a map: want f:NAME`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := base(tt.managed)
			if tt.secret {
				u = obj(t, "ns", `apiVersion: v1
kind: Secret
metadata:
  name: w
  namespace: NS
  managedFields: `+tt.managed+`
data: {pw: aGVsbG8=, tok: d29ybGQ=, other: eA==}
`)
			}
			before := u.DeepCopy()
			got, err := restore.ExtractOwned(u, "m")
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ExtractOwned() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(obj(t, "ns", tt.want).Object, got.Object); diff != "" {
				t.Errorf("ExtractOwned() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object, u.Object); diff != "" {
				t.Errorf("ExtractOwned() changed its input (-before +after):\n%s", diff)
			}
		})
	}
}
