package plan

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/graph"
	"github.com/snapply/snapply/internal/object"
)

// Graph returns the resource graph of a plan over the snapshot it was
// computed against: the snapshot with the plan applied (the graph the
// reference checks of Analyze read), and the objects the plan deletes, as
// they are live, so that a drawing shows what a prune takes away.
func Graph(p *Plan, live map[object.Key]*unstructured.Unstructured, covered func(schema.GroupKind, string) bool) *graph.Graph {
	a := &analysis{p: p, opts: AnalyzeOptions{Live: live}, byKey: make(map[object.Key]int, len(p.Changes))}
	for i, c := range p.Changes {
		a.byKey[c.Ref.Key()] = i
	}
	objs := a.afterState()
	for _, c := range p.Changes {
		if c.Action == Delete && c.Before != nil {
			objs = append(objs, c.Before)
		}
	}
	g := graph.New(objs)
	g.Covered = covered
	return g
}

// GraphStatus returns what a drawing of p's graph says about an object:
// the plan's action, and whether the change carries a risk; false for an
// object the plan does not name.
func GraphStatus(p *Plan) func(object.Key) (graph.Status, bool) {
	m := make(map[object.Key]graph.Status, len(p.Changes))
	for _, c := range p.Changes {
		m[c.Ref.Key()] = graph.Status{State: string(c.Action), Risk: len(c.Risks) > 0}
	}
	return func(k object.Key) (graph.Status, bool) {
		s, ok := m[k]
		return s, ok
	}
}

// ChangedKeys returns the objects of p that a reviewer must see: every
// change, every object that stops an apply, every object with a risk.
func ChangedKeys(p *Plan) []object.Key {
	var out []object.Key
	for _, c := range p.Changes {
		if c.Action.IsChange() || c.Action.IsError() || len(c.Risks) > 0 {
			out = append(out, c.Ref.Key())
		}
	}
	return out
}

// ChangeView is the drawing of a PR comment: the changed objects of p and
// their direct neighbours (owned children aside), at most maxNodes of them,
// changed objects first.
func ChangeView(g *graph.Graph, p *Plan, maxNodes int) *graph.View {
	seeds := ChangedKeys(p)
	if seeds == nil {
		seeds = []object.Key{}
	}
	return g.View(graph.ViewOptions{Status: GraphStatus(p), Seeds: seeds, Depth: 1, MaxNodes: maxNodes})
}
