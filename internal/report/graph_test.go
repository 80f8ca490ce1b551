package report

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/graph"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/report/mermaidtest"
)

// fixtureObjects reads the graph package's fixture: one object of every
// kind the graph has an edge for.
func fixtureObjects(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile("../graph/testdata/edges.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(b), "\n---\n") {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

// fanPlan is a plan that creates n ConfigMaps that one Deployment (updated)
// mounts, and its graph.
func fanPlan(n int) (*plan.Plan, *graph.Graph) {
	dep := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "prod"},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{}, "volumes": []any{}}}},
	}}
	objs := []*unstructured.Unstructured{dep}
	p := &plan.Plan{}
	p.Changes = append(p.Changes, plan.Change{Ref: object.RefOf(dep), Action: plan.Update})
	var vols []any
	for i := 0; i < n; i++ {
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%03d", i), "namespace": "prod"},
		}}
		objs = append(objs, cm)
		vols = append(vols, map[string]any{"name": cm.GetName(), "configMap": map[string]any{"name": cm.GetName()}})
		p.Changes = append(p.Changes, plan.Change{Ref: object.RefOf(cm), Action: plan.Create})
	}
	_ = unstructured.SetNestedSlice(dep.Object, vols, "spec", "template", "spec", "volumes")
	p.Summary = plan.Summarize(p.Changes)
	return p, graph.New(objs)
}

func TestCommentGraphIsCappedAndSaysWhatIsLeftOut(t *testing.T) {
	p, g := fanPlan(60)
	v := plan.ChangeView(g, p, 40)
	if len(v.Nodes) != 40 || v.Omitted != 21 {
		t.Fatalf("%d nodes, %d omitted; want 40 and 21", len(v.Nodes), v.Omitted)
	}
	opts := DefaultMarkdownOptions()
	opts.Graph, opts.GraphLink = v, "[the run's artifacts](https://example.com/run#artifacts)"
	var b bytes.Buffer
	if err := Markdown(&b, p, opts); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"<details><summary>Graph: 40 objects changed or next to a change; 21 more not shown ([the run's artifacts](https://example.com/run#artifacts))</summary>",
		"```mermaid\nflowchart LR\n",
		"classDef create fill:",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("comment lacks %q", want)
		}
	}
	if strings.Index(md, "```mermaid") > strings.Index(md, changesTableHead) {
		t.Error("the graph comes after the changes table, want it after the summary")
	}

	// A budget that details overrun: details go, the graph stays.
	opts.MaxBytes = len(md) - 1000
	b.Reset()
	if err := Markdown(&b, p, opts); err != nil {
		t.Fatal(err)
	}
	if b.Len() > opts.MaxBytes || !strings.Contains(b.String(), "```mermaid") {
		t.Errorf("fitted to %d: %d bytes, graph kept: %v", opts.MaxBytes, b.Len(), strings.Contains(b.String(), "```mermaid"))
	}
	// A budget that only the summary and the whole table fit: the graph
	// goes before any row does.
	d := newMarkdownDoc(p, DefaultMarkdownOptions())
	opts.MaxBytes = len(d.head("")) + d.tbl.len(len(d.tbl.rows)) + len(droppedNote(len(d.details))) + 100
	b.Reset()
	if err := Markdown(&b, p, opts); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); b.Len() > opts.MaxBytes || strings.Contains(got, "```mermaid") || !strings.Contains(got, "cm-059") {
		t.Errorf("fitted to %d: %d bytes, graph kept %v, last row kept %v", opts.MaxBytes, b.Len(), strings.Contains(got, "```mermaid"), strings.Contains(got, "cm-059"))
	}
}

// TestMermaidParses feeds the drawings to Mermaid's own parser (the pinned
// npm package in hack/mermaid, run by node with a jsdom window).
func TestMermaidParses(t *testing.T) {
	g := graph.New(fixtureObjects(t))
	all := g.View(graph.ViewOptions{Depth: 0})
	p, fan := fanPlan(60)
	states := g.View(graph.ViewOptions{Status: func(k object.Key) (graph.Status, bool) {
		switch k.Kind {
		case "ConfigMap":
			return graph.Status{State: "update", Risk: true}, true
		case "Secret":
			return graph.Status{State: "create"}, true
		case "Role":
			return graph.Status{State: "delete"}, true
		}
		return graph.Status{State: "unchanged"}, true
	}})
	hostile := &graph.View{Nodes: []graph.DrawNode{
		{ID: "n0", Ref: object.Ref{Kind: "Widget", Namespace: "a\"b", Name: "<script>alert(1)</script>|x`y`"}, State: "create"},
		{ID: "n1", Ref: object.Ref{Kind: "end", Name: "graph [x] (y) {z} #1; -->"}, State: graph.StateMissing},
	}, Edges: []graph.DrawEdge{{From: "n0", To: "n1", Kind: graph.Owner}}}
	diagrams := []string{Mermaid(all), Mermaid(states), Mermaid(plan.ChangeView(fan, p, 40)), Mermaid(hostile)}
	if len(all.Nodes) != 17 || len(all.Edges) < 15 {
		t.Fatalf("fixture view: %d nodes, %d edges", len(all.Nodes), len(all.Edges))
	}
	results := mermaidtest.Parse(t, diagrams)
	for i, r := range results {
		if !r.OK || r.Type != "flowchart-v2" {
			t.Errorf("diagram %d: %+v\n%s", i, r, diagrams[i])
		}
	}
	// The checker does reject a broken diagram.
	if r := mermaidtest.Parse(t, []string{"flowchart LR\n  n0[\"open\n"}); r[0].OK {
		t.Error("the parser accepted a broken diagram")
	}
}
