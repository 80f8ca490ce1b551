package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/graph"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

// bigPlan is a plan of n objects in 10 namespaces: per app a Deployment
// (updated: image and replicas, with field diffs and a unified diff), its
// ConfigMap (created, whole YAML as the diff), its Service (unchanged) and
// a Secret (created), with their graph.
func bigPlan(n int) (*plan.Plan, *graph.Graph) {
	p := &plan.Plan{Snapshot: "20261123T000000Z-abcdef"}
	var objs []*unstructured.Unstructured
	for i := 0; len(p.Changes) < n; i++ {
		ns, app := fmt.Sprintf("team-%d", i%10), fmt.Sprintf("app-%04d", i)
		dep := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": app, "namespace": ns},
			"spec": map[string]any{"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": app}},
				"spec": map[string]any{
					"containers": []any{map[string]any{"name": "main", "image": "nginx:1.27.3",
						"envFrom": []any{map[string]any{"configMapRef": map[string]any{"name": app}}, map[string]any{"secretRef": map[string]any{"name": app}}}}},
				}}},
		}}
		mk := func(kind string) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": app, "namespace": ns},
				"spec": map[string]any{"selector": map[string]any{"app": app}}}}
		}
		cm, svc, sec := mk("ConfigMap"), mk("Service"), mk("Secret")
		objs = append(objs, dep, cm, svc, sec)
		var yamlDiff strings.Builder
		fmt.Fprintf(&yamlDiff, "--- configmap/%s -n %s (live)\n+++ configmap/%s -n %s (after apply)\n@@ -0,0 +1,30 @@\n", app, ns, app, ns)
		for l := 0; l < 26; l++ {
			fmt.Fprintf(&yamlDiff, "+  KEY_%02d: value-%02d-of-%s\n", l, l, app)
		}
		depDiff := fmt.Sprintf("--- deployment.apps/%s -n %s (live)\n+++ deployment.apps/%s -n %s (after apply)\n@@ -5,7 +5,7 @@\n metadata:\n   name: %s\n spec:\n-  replicas: 2\n+  replicas: 3\n   template:\n     spec:\n       containers:\n-      - image: nginx:1.27.0\n+      - image: nginx:1.27.3\n", app, ns, app, ns, app)
		p.Changes = append(p.Changes,
			plan.Change{Ref: object.RefOf(dep), Action: plan.Update, Source: object.Source{File: "apps/" + app + ".yaml", Line: 1}, Diff: depDiff,
				Fields: []plan.FieldDiff{{Path: "spec.replicas", Op: "change", Before: "2", After: "3"}, {Path: "spec.template.spec.containers[name=main].image", Op: "change", Before: "nginx:1.27.0", After: "nginx:1.27.3"}},
				Images: []plan.ImageChange{{Container: "main", Old: "nginx:1.27.0", New: "nginx:1.27.3"}}},
			plan.Change{Ref: object.RefOf(cm), Action: plan.Create, Source: object.Source{File: "apps/" + app + ".yaml", Line: 30}, Diff: yamlDiff.String()},
			plan.Change{Ref: object.RefOf(svc), Action: plan.Unchanged, Source: object.Source{File: "apps/" + app + ".yaml", Line: 60}},
			plan.Change{Ref: object.RefOf(sec), Action: plan.Create, Source: object.Source{File: "apps/" + app + ".yaml", Line: 70},
				Diff: "+data:\n+  token: <redacted sha256:0123456789abcdef>\n", Risks: []plan.Risk{{Kind: plan.RiskNoRestart, Message: "a new Secret"}}},
		)
		p.Images = append(p.Images, plan.ImageUse{Ref: object.RefOf(dep), Container: "main", Before: "nginx:1.27.0", After: "nginx:1.27.3", Status: "changed"})
	}
	p.Changes = p.Changes[:n]
	p.Summary = plan.Summarize(p.Changes)
	return p, graph.New(objs)
}

// planView is the view the HTML plan draws: every object of the plan and
// its direct neighbours.
func planView(p *plan.Plan, g *graph.Graph) *graph.View {
	return g.View(graph.ViewOptions{Status: plan.GraphStatus(p), Depth: 1})
}

// countingWriter counts bytes.
type countingWriter struct{ n int }

func (c *countingWriter) Write(b []byte) (int, error) { c.n += len(b); return len(b), nil }

// TestHTMLPlanOfAThousandObjects: the HTML plan of 1,000 objects is
// written in under a second and is under 5 MB (the time includes choosing
// the graph's view and laying it out).
func TestHTMLPlanOfAThousandObjects(t *testing.T) {
	p, g := bigPlan(1000)
	var w countingWriter
	start := time.Now()
	v := planView(p, g)
	if err := HTMLPlan(&w, p, HTMLOptions{Graph: v}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("HTML plan of %d objects (%d graph nodes, %d edges): %.2f MB in %s", len(p.Changes), len(v.Nodes), len(v.Edges), float64(w.n)/1e6, took)
	if w.n >= 5_000_000 {
		t.Errorf("%d bytes, want under 5 MB", w.n)
	}
	if !raceEnabled && took >= time.Second {
		t.Errorf("took %s, want under 1s", took)
	}
}

func BenchmarkHTMLPlan1000(b *testing.B) {
	p, g := bigPlan(1000)
	v := planView(p, g)
	var buf bytes.Buffer
	if err := HTMLPlan(&buf, p, HTMLOptions{Graph: v}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportMetric(float64(buf.Len())/1e6, "MB/page")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := HTMLPlan(io.Discard, p, HTMLOptions{Graph: planView(p, g)}); err != nil {
			b.Fatal(err)
		}
	}
}
