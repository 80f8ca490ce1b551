package graph

import (
	"sort"
	"strconv"

	"github.com/snapply/snapply/internal/object"
)

// The states a drawn node can be in besides a plan's actions (create,
// update, delete, unchanged, conflict, invalid, pending).
const (
	// StateLive: an object of the snapshot that the plan does not touch.
	StateLive = "live"
	// StateMissing: an object that a reference names and that is not there.
	StateMissing = "missing"
)

// Status is what a drawing says about one object.
type Status struct {
	// State is the plan's action on the object ("create", "update", ...),
	// or StateLive for an object the plan does not name.
	State string
	// Risk marks an object with a risk a reviewer should look at.
	Risk bool
}

// Changed reports whether the state changes the cluster, or stops an
// apply, or the object carries a risk: what a reviewer must see.
func (s Status) Changed() bool {
	switch s.State {
	case "create", "update", "delete", "pending", "conflict", "invalid":
		return true
	}
	return s.Risk
}

// DrawNode is one node of a View.
type DrawNode struct {
	// ID is a short identifier, unique in the view ("n0", "n1", ...).
	ID string `json:"id"`
	// Ref names the object.
	Ref object.Ref `json:"ref"`
	// State is the plan's action, StateLive or StateMissing.
	State string `json:"state"`
	// Risk marks an object with a risk.
	Risk bool `json:"risk,omitempty"`
}

// Label is the node's caption: "Kind/name", and "ns/Kind/name" for
// namespaced objects.
func (n DrawNode) Label() string {
	if n.Ref.Namespace == "" {
		return n.Ref.Kind + "/" + n.Ref.Name
	}
	return n.Ref.Namespace + "/" + n.Ref.Kind + "/" + n.Ref.Name
}

// DrawEdge is one edge of a View: all the references of one kind from one
// object to another, drawn once.
type DrawEdge struct {
	From string   `json:"from"`
	To   string   `json:"to"`
	Kind EdgeKind `json:"kind"`
}

// View is the part of a graph that a drawing shows: its nodes in identity
// order, each with its state, and the edges between them.
type View struct {
	Nodes []DrawNode `json:"nodes"`
	Edges []DrawEdge `json:"edges"`
	// Omitted counts the objects that were chosen but left out to keep the
	// view under its limit.
	Omitted int `json:"omitted,omitempty"`
}

// ViewOptions chooses what a View shows.
type ViewOptions struct {
	// Status says what the drawing says about an object of the graph.
	// Nil draws every object as StateLive.
	Status func(object.Key) (Status, bool)
	// Seeds are the objects the view starts from: a View holds them and
	// their neighbours to Depth edges away (either direction). Nil seeds
	// every object that has a Status.
	Seeds []object.Key
	// Depth is how many edges away from a seed the view reaches.
	Depth int
	// Children, when false, leaves out the objects that name a seed or a
	// neighbour as their owner (a Deployment's ReplicaSets and Pods),
	// unless they are seeds themselves.
	Children bool
	// MaxNodes caps the nodes, seeds first; 0 means no limit.
	MaxNodes int
}

// View draws the part of g that opts choose. References to objects that
// are not in the graph, and whose absence g.Resolve confirms, are drawn as
// StateMissing nodes.
func (g *Graph) View(opts ViewOptions) *View {
	status := func(k object.Key) Status {
		if opts.Status != nil {
			if s, ok := opts.Status(k); ok {
				return s
			}
		}
		return Status{State: StateLive}
	}
	seeds := opts.Seeds
	if seeds == nil {
		for _, n := range g.sortedNodes() {
			if opts.Status == nil {
				seeds = append(seeds, n.Ref.Key())
			} else if _, ok := opts.Status(n.Ref.Key()); ok {
				seeds = append(seeds, n.Ref.Key())
			}
		}
	}
	adj := map[object.Key][]Edge{}
	for _, e := range g.Edges {
		adj[e.From.Key()] = append(adj[e.From.Key()], e)
		adj[e.To.Key()] = append(adj[e.To.Key()], e)
	}
	isSeed := map[object.Key]bool{}
	for _, s := range seeds {
		isSeed[s] = true
	}
	// Breadth first: order is seeds, then each ring outwards.
	order := append([]object.Key(nil), seeds...)
	dist := map[object.Key]int{}
	for _, s := range seeds {
		dist[s] = 0
	}
	for i := 0; i < len(order); i++ {
		k := order[i]
		if dist[k] >= opts.Depth {
			continue
		}
		var next []object.Key
		for _, e := range adj[k] {
			other := e.To.Key()
			if other == k {
				other = e.From.Key()
			}
			if _, seen := dist[other]; seen {
				continue
			}
			if e.Kind == Owner && e.To.Key() == k && !opts.Children {
				continue // a child of k
			}
			if g.Nodes[other] == nil && g.Resolve(e) != Missing {
				continue
			}
			dist[other] = dist[k] + 1
			next = append(next, other)
		}
		sort.Slice(next, func(a, b int) bool { return keyLess(next[a], next[b]) })
		order = append(order, next...)
	}
	v := &View{}
	if opts.MaxNodes > 0 && len(order) > opts.MaxNodes {
		v.Omitted = len(order) - opts.MaxNodes
		order = order[:opts.MaxNodes]
	}
	sort.Slice(order, func(a, b int) bool { return keyLess(order[a], order[b]) })
	ids := map[object.Key]string{}
	for i, k := range order {
		ids[k] = "n" + strconv.Itoa(i)
		n := DrawNode{ID: ids[k]}
		if node := g.Nodes[k]; node != nil {
			s := status(k)
			n.Ref, n.State, n.Risk = node.Ref, s.State, s.Risk
		} else {
			n.Ref, n.State = refOfKey(g, k), StateMissing
		}
		v.Nodes = append(v.Nodes, n)
	}
	seen := map[DrawEdge]bool{}
	for _, e := range g.Edges {
		from, ok1 := ids[e.From.Key()]
		to, ok2 := ids[e.To.Key()]
		de := DrawEdge{From: from, To: to, Kind: e.Kind}
		if !ok1 || !ok2 || seen[de] {
			continue
		}
		seen[de] = true
		v.Edges = append(v.Edges, de)
	}
	return v
}

// refOfKey finds the Ref (with its version) that an edge of g gives k.
func refOfKey(g *Graph, k object.Key) object.Ref {
	for _, e := range g.Edges {
		if e.To.Key() == k {
			return e.To
		}
	}
	return object.Ref{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}
}

func keyLess(a, b object.Key) bool {
	return object.Compare(object.Ref{Group: a.Group, Kind: a.Kind, Namespace: a.Namespace, Name: a.Name},
		object.Ref{Group: b.Group, Kind: b.Kind, Namespace: b.Namespace, Name: b.Name}) < 0
}

// Counts returns how many nodes of v are in each state.
func (v *View) Counts() map[string]int {
	out := map[string]int{}
	for _, n := range v.Nodes {
		out[n.State]++
	}
	return out
}
