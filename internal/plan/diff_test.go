package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func deployment(image, sidecar string, replicas int64) *unstructured.Unstructured {
	containers := []any{map[string]any{"name": "web", "image": image}}
	if sidecar != "" {
		containers = append(containers, map[string]any{"name": "proxy", "image": sidecar})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "prod",
			"resourceVersion": "42", "uid": "abc", "generation": int64(3),
			"creationTimestamp": "2026-01-01T00:00:00Z",
			"managedFields":     []any{map[string]any{"manager": "snapply"}},
		},
		"spec": map[string]any{
			"replicas": replicas,
			"template": map[string]any{"spec": map[string]any{
				"initContainers": []any{map[string]any{"name": "migrate", "image": image}},
				"containers":     containers,
			}},
		},
		"status": map[string]any{"readyReplicas": replicas},
	}}
}

func TestImageChanges(t *testing.T) {
	cases := []struct {
		name          string
		before, after *unstructured.Unstructured
		want          []ImageChange
	}{
		{"same", deployment("a:1", "p:1", 1), deployment("a:1", "p:1", 2), nil},
		{"bump", deployment("a:1", "p:1", 1), deployment("a:2", "p:1", 1), []ImageChange{
			{Container: "init:migrate", Old: "a:1", New: "a:2"},
			{Container: "web", Old: "a:1", New: "a:2"},
		}},
		{"sidecar removed", deployment("a:1", "p:1", 1), deployment("a:1", "", 1), []ImageChange{{Container: "proxy", Old: "p:1"}}},
		{"create", nil, deployment("a:1", "", 1), []ImageChange{{Container: "init:migrate", New: "a:1"}, {Container: "web", New: "a:1"}}},
		{"not a workload", nil, &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ImageChanges(tc.before, tc.after)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestEqualIgnoresServerManagedFields(t *testing.T) {
	a := deployment("a:1", "", 2)
	b := deployment("a:1", "", 2)
	b.SetResourceVersion("43")
	b.SetGeneration(4)
	b.SetManagedFields(nil)
	if err := unstructured.SetNestedField(b.Object, int64(0), "status", "readyReplicas"); err != nil {
		t.Fatal(err)
	}
	if !Equal(a, b) {
		t.Error("objects differing only in server-managed fields and status must be equal")
	}
	if Equal(a, deployment("a:1", "", 3)) {
		t.Error("objects with different replicas must differ")
	}
	if a.GetResourceVersion() != "42" {
		t.Error("Equal must not modify its arguments")
	}
}

func TestDiff(t *testing.T) {
	d := Diff("deployment.apps/web -n prod", deployment("a:1", "", 2), deployment("a:2", "", 2), 3)
	for _, want := range []string{
		"--- deployment.apps/web -n prod (live)",
		"+++ deployment.apps/web -n prod (after apply)",
		"-      - image: a:1",
		"+      - image: a:2",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	for _, noise := range []string{"resourceVersion", "managedFields", "readyReplicas", "uid"} {
		if strings.Contains(d, noise) {
			t.Errorf("diff shows %s:\n%s", noise, d)
		}
	}
	if got := Diff("x", deployment("a:1", "", 2), deployment("a:1", "", 2), 3); got != "" {
		t.Errorf("diff of equal objects = %q, want empty", got)
	}
	if got := Diff("x", nil, deployment("a:1", "", 2), 3); !strings.Contains(got, "+kind: Deployment") {
		t.Errorf("create diff:\n%s", got)
	}
}
