// Package graph resolves the references between Kubernetes objects: a
// workload to the ConfigMaps, Secrets (and their keys), ServiceAccount,
// PersistentVolumeClaims and image pull Secrets its pod template uses; an
// Ingress to its Services and ports; a HorizontalPodAutoscaler to its
// target; a RoleBinding to its Role and ServiceAccounts; a Service to the
// pod templates its selector matches. Structural edges say how objects
// belong together: an object to the owners in its ownerReferences, a
// PodDisruptionBudget to the workloads its selector matches, a custom
// resource to its CustomResourceDefinition.
//
// A View is the part of a graph that a drawing shows (a focus and its
// neighbours, the changes of a plan and theirs), each node with a state.
//
// A Graph is built over a set of objects (the desired set laid over a
// snapshot, for example); its nodes are the objects and its edges the
// references, each with a kind. Edges may point at objects that are not in
// the set: Resolve says whether the target, and the key or port named, is
// there. The graph is data; it reads no cluster.
package graph

import (
	"fmt"
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/object"
)

// EdgeKind says how one object refers to another.
type EdgeKind string

// The kinds of edges.
const (
	// EnvFrom: a container takes all keys of a ConfigMap or Secret as
	// environment variables (envFrom).
	EnvFrom EdgeKind = "env-from"
	// EnvKey: an environment variable takes one key of a ConfigMap or
	// Secret (configMapKeyRef, secretKeyRef); Edge.Key names it.
	EnvKey EdgeKind = "env-key"
	// Volume: a volume mounts a ConfigMap, a Secret (Edge.Key names an
	// item's key, when items are listed) or a PersistentVolumeClaim.
	Volume EdgeKind = "volume"
	// ServiceAccount: a pod template runs as a ServiceAccount.
	ServiceAccount EdgeKind = "service-account"
	// ImagePullSecret: a pod template pulls images with a Secret.
	ImagePullSecret EdgeKind = "image-pull-secret"
	// Backend: an Ingress or a Gateway API route (HTTPRoute, GRPCRoute,
	// TLSRoute, TCPRoute, UDPRoute) routes to a Service, or a route to
	// another backend kind; Edge.Key names the Service port (a number or
	// a name).
	Backend EdgeKind = "backend"
	// ParentRef: a Gateway API route attaches to its parent, a Gateway
	// unless it names another kind (spec.parentRefs).
	ParentRef EdgeKind = "parent-ref"
	// GatewayClass: a Gateway names its GatewayClass.
	GatewayClass EdgeKind = "gateway-class"
	// ScaleTarget: a HorizontalPodAutoscaler scales an object.
	ScaleTarget EdgeKind = "scale-target"
	// RoleRef: a RoleBinding or ClusterRoleBinding grants a Role or
	// ClusterRole.
	RoleRef EdgeKind = "role-ref"
	// Subject: a binding grants to a ServiceAccount.
	Subject EdgeKind = "subject"
	// Selects: a Service's selector matches a pod template (or a Pod).
	Selects EdgeKind = "selects"
	// Owner: an object names another in its metadata.ownerReferences
	// (a ReplicaSet its Deployment, a Pod its ReplicaSet).
	Owner EdgeKind = "owner"
	// Disruption: a PodDisruptionBudget's selector matches a workload's
	// pod template.
	Disruption EdgeKind = "disruption-budget"
	// DefinedBy: a custom resource is of a kind that a
	// CustomResourceDefinition of the set defines.
	DefinedBy EdgeKind = "defined-by"
)

// structural reports whether edges of kind k describe how objects belong
// together rather than a reference a pod or a route needs: Broken does not
// check them.
func structural(k EdgeKind) bool { return k == Owner || k == Disruption || k == DefinedBy }

// Node is one object of the graph.
type Node struct {
	// Ref names the object.
	Ref object.Ref
	// Obj is the object.
	Obj *unstructured.Unstructured
}

// Edge is one reference from an object to another.
type Edge struct {
	// From is the object that refers.
	From object.Ref
	// To names the object referred to; its Version may be empty.
	To object.Ref
	// Kind says how From refers to To.
	Kind EdgeKind
	// Key is the ConfigMap or Secret key, or the Service port, that the
	// reference names; empty when it names the whole object.
	Key string
	// Field is where in From the reference is, like
	// "containers[name=web].env[name=LOG_LEVEL]".
	Field string
	// Optional marks a reference that a pod does without (optional: true).
	Optional bool
}

// String prints "from -> to (field)".
func (e Edge) String() string {
	s := e.From.String() + " -> " + e.To.String()
	if e.Key != "" {
		s += " key " + e.Key
		if e.Kind == Backend {
			s = e.From.String() + " -> " + e.To.String() + " port " + e.Key
		}
	}
	return s
}

// Resolution is what a reference points at.
type Resolution string

// The resolutions of an edge.
const (
	// Found: the target exists, with the key or port named.
	Found Resolution = "found"
	// Missing: the target does not exist.
	Missing Resolution = "missing"
	// MissingKey: the ConfigMap or Secret exists without the key named.
	MissingKey Resolution = "missing-key"
	// MissingPort: the Service exists without the port named.
	MissingPort Resolution = "missing-port"
	// Unknown: the set does not cover the target's kind and namespace, so
	// nothing can be said.
	Unknown Resolution = "unknown"
)

// Graph is a set of objects and the references between them.
type Graph struct {
	// Nodes are the objects, by identity.
	Nodes map[object.Key]*Node
	// Edges are the references, sorted by From, then Kind, To and Key.
	// Selects edges are only those that match.
	Edges []Edge
	// Covered reports whether the set holds every object of kind gk in
	// namespace ns ("" for cluster-scoped kinds), so that a reference to
	// an object that is not in the set points at nothing. Nil covers
	// everything.
	Covered func(gk schema.GroupKind, ns string) bool
}

// New builds the graph of objs.
func New(objs []*unstructured.Unstructured) *Graph {
	g := &Graph{Nodes: make(map[object.Key]*Node, len(objs))}
	for _, u := range objs {
		ref := object.RefOf(u)
		g.Nodes[ref.Key()] = &Node{Ref: ref, Obj: u}
	}
	type template struct {
		ref    object.Ref
		labels labels.Set
	}
	templates := map[string][]template{} // by namespace
	nodes := g.sortedNodes()
	for _, n := range nodes {
		g.Edges = append(g.Edges, refsOf(n.Ref, n.Obj)...)
		if lbls, ok := PodTemplateLabels(n.Obj); ok {
			templates[n.Ref.Namespace] = append(templates[n.Ref.Namespace], template{n.Ref, labels.Set(lbls)})
		}
	}
	crds := crdKinds(nodes)
	for _, n := range nodes {
		g.Edges = append(g.Edges, g.ownerEdges(n)...)
		if crd, ok := crds[n.Ref.GroupKind()]; ok {
			g.Edges = append(g.Edges, Edge{From: n.Ref, To: crd, Kind: DefinedBy, Field: "apiVersion"})
		}
		if sel, ok := PDBSelector(n.Obj); ok {
			for _, t := range templates[n.Ref.Namespace] {
				if sel.Matches(t.labels) && !controlled(g.Nodes[t.ref.Key()].Obj) {
					g.Edges = append(g.Edges, Edge{From: n.Ref, To: t.ref, Kind: Disruption, Field: "spec.selector"})
				}
			}
		}
		if sel, ok := ServiceSelector(n.Obj); ok {
			for _, t := range templates[n.Ref.Namespace] {
				if sel.Matches(t.labels) {
					g.Edges = append(g.Edges, Edge{From: n.Ref, To: t.ref, Kind: Selects, Field: "spec.selector"})
				}
			}
		}
	}
	sort.SliceStable(g.Edges, func(i, j int) bool { return compareEdges(g.Edges[i], g.Edges[j]) < 0 })
	return g
}

func (g *Graph) sortedNodes() []*Node {
	out := make([]*Node, 0, len(g.Nodes))
	for _, n := range g.Nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return object.Compare(out[i].Ref, out[j].Ref) < 0 })
	return out
}

func compareEdges(a, b Edge) int {
	if c := object.Compare(a.From, b.From); c != 0 {
		return c
	}
	if a.Kind != b.Kind {
		if a.Kind < b.Kind {
			return -1
		}
		return 1
	}
	if c := object.Compare(a.To, b.To); c != 0 {
		return c
	}
	switch {
	case a.Key < b.Key:
		return -1
	case a.Key > b.Key:
		return 1
	case a.Field < b.Field:
		return -1
	case a.Field > b.Field:
		return 1
	}
	return 0
}

// Node returns the node named by ref's identity, or nil.
func (g *Graph) Node(ref object.Ref) *Node { return g.Nodes[ref.Key()] }

// From returns the edges from ref.
func (g *Graph) From(ref object.Ref) []Edge {
	var out []Edge
	for _, e := range g.Edges {
		if e.From.Key() == ref.Key() {
			out = append(out, e)
		}
	}
	return out
}

// To returns the edges to ref.
func (g *Graph) To(ref object.Ref) []Edge {
	var out []Edge
	for _, e := range g.Edges {
		if e.To.Key() == ref.Key() {
			out = append(out, e)
		}
	}
	return out
}

// Resolve says what e points at.
func (g *Graph) Resolve(e Edge) Resolution {
	n := g.Node(e.To)
	if n == nil {
		if implicit(e.To) {
			return Found
		}
		if g.Covered != nil && !g.Covered(e.To.GroupKind(), e.To.Namespace) {
			return Unknown
		}
		return Missing
	}
	if e.Key == "" || n.Obj == nil {
		return Found
	}
	switch {
	case e.Kind == Backend:
		if !hasPort(n.Obj, e.Key) {
			return MissingPort
		}
	case e.To.Group == "" && (e.To.Kind == "ConfigMap" || e.To.Kind == "Secret"):
		if !hasKey(n.Obj, e.Key) {
			return MissingKey
		}
	}
	return Found
}

// implicit reports whether the server makes ref in every namespace by
// itself: the default ServiceAccount.
func implicit(ref object.Ref) bool {
	return ref.Group == "" && ref.Kind == "ServiceAccount" && ref.Name == "default"
}

// Broken is a reference that points at nothing.
type Broken struct {
	Edge
	// Resolution is Missing, MissingKey or MissingPort, or Missing with an
	// empty Edge.To for a Service whose selector matches no pod template.
	Resolution Resolution
}

// Message says in one line what is broken, naming both ends.
func (b Broken) Message() string {
	switch {
	case b.Kind == Selects:
		return fmt.Sprintf("%s: its selector matches no pod template", b.From)
	case b.Resolution == MissingKey:
		return fmt.Sprintf("%s (%s) -> %s: key %q does not exist", b.From, b.Field, b.To, b.Key)
	case b.Resolution == MissingPort:
		return fmt.Sprintf("%s (%s) -> %s: port %s does not exist", b.From, b.Field, b.To, b.Key)
	}
	return fmt.Sprintf("%s (%s) -> %s: does not exist", b.From, b.Field, b.To)
}

// Broken returns the references that point at nothing: edges whose target
// is missing (optional ones aside), and Services with a selector that
// matches no pod template, in edge order.
func (g *Graph) Broken() []Broken {
	var out []Broken
	for _, e := range g.Edges {
		if e.Optional || e.Kind == Selects || structural(e.Kind) {
			continue
		}
		if r := g.Resolve(e); r != Found && r != Unknown {
			out = append(out, Broken{Edge: e, Resolution: r})
		}
	}
	selects := map[object.Key]bool{}
	for _, e := range g.Edges {
		if e.Kind == Selects {
			selects[e.From.Key()] = true
		}
	}
	for _, n := range g.sortedNodes() {
		if _, ok := ServiceSelector(n.Obj); !ok || selects[n.Ref.Key()] {
			continue
		}
		if g.Covered != nil && !g.Covered(schema.GroupKind{Group: "apps", Kind: "Deployment"}, n.Ref.Namespace) {
			continue
		}
		out = append(out, Broken{Edge: Edge{From: n.Ref, Kind: Selects, Field: "spec.selector"}, Resolution: Missing})
	}
	return out
}

func hasKey(u *unstructured.Unstructured, key string) bool {
	for _, field := range []string{"data", "binaryData", "stringData"} {
		m, _ := u.Object[field].(map[string]any)
		if _, ok := m[key]; ok {
			return true
		}
	}
	return false
}

func hasPort(svc *unstructured.Unstructured, port string) bool {
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	for _, p := range ports {
		m, _ := p.(map[string]any)
		if name, _ := m["name"].(string); name != "" && name == port {
			return true
		}
		if n, ok := m["port"]; ok && fmt.Sprint(n) == port {
			return true
		}
	}
	return false
}

// itoa prints a port number of any JSON numeric type.
func itoa(v any) string {
	switch n := v.(type) {
	case int64:
		return strconv.FormatInt(n, 10)
	case float64:
		return strconv.FormatFloat(n, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// ForgetObjects drops the objects the nodes hold, keeping their identities
// and the edges, so that a graph kept for drawing does not hold the
// objects' memory. Afterwards Resolve can no longer check a key or a port
// (it says Found for a target that is there).
func (g *Graph) ForgetObjects() {
	for _, n := range g.Nodes {
		n.Obj = nil
	}
}
