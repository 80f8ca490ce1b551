package graph

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/object"
)

// edgeLines prints every edge of g of kind k as "from -> to".
func edgeLines(g *Graph, k EdgeKind) []string {
	var out []string
	for _, e := range g.Edges {
		if e.Kind == k {
			out = append(out, e.From.String()+" -> "+e.To.String())
		}
	}
	return out
}

func fixture(t *testing.T) *Graph {
	t.Helper()
	b, err := os.ReadFile("testdata/edges.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return New(parse(t, strings.TrimSpace(string(b))))
}

// TestEdgeKinds builds the graph of a fixture that holds one object of every
// kind the graph knows, and checks the edges of every kind.
func TestEdgeKinds(t *testing.T) {
	g := fixture(t)
	tests := []struct {
		kind EdgeKind
		want []string
	}{
		{Owner, []string{"replicaset.apps/web-5d8f -n shop -> deployment.apps/web -n shop"}},
		{Selects, []string{"service/web -n shop -> deployment.apps/web -n shop", "service/web -n shop -> replicaset.apps/web-5d8f -n shop"}},
		{EnvFrom, []string{"deployment.apps/web -n shop -> secret/web-creds -n shop"}},
		{EnvKey, []string{"deployment.apps/web -n shop -> configmap/web-config -n shop"}},
		{ServiceAccount, []string{"deployment.apps/web -n shop -> serviceaccount/web -n shop"}},
		{Volume, []string{"deployment.apps/web -n shop -> persistentvolumeclaim/web-cache -n shop"}},
		{Backend, []string{"httproute.gateway.networking.k8s.io/web -n shop -> service/web -n shop", "ingress.networking.k8s.io/web -n shop -> service/web -n shop"}},
		{ParentRef, []string{"httproute.gateway.networking.k8s.io/web -n shop -> gateway.gateway.networking.k8s.io/public -n shop"}},
		{GatewayClass, []string{"gateway.gateway.networking.k8s.io/public -n shop -> gatewayclass.gateway.networking.k8s.io/eg"}},
		{ScaleTarget, []string{"horizontalpodautoscaler.autoscaling/web -n shop -> deployment.apps/web -n shop"}},
		// The PDB's selector matches the Deployment's template; the
		// ReplicaSet it controls is its owner's business.
		{Disruption, []string{"poddisruptionbudget.policy/web -n shop -> deployment.apps/web -n shop"}},
		{RoleRef, []string{"rolebinding.rbac.authorization.k8s.io/web-reader -n shop -> role.rbac.authorization.k8s.io/reader -n shop"}},
		// Users are not objects: only the ServiceAccount subject is an edge.
		{Subject, []string{"rolebinding.rbac.authorization.k8s.io/web-reader -n shop -> serviceaccount/web -n shop"}},
		{DefinedBy, []string{"widget.example.com/blue -n shop -> customresourcedefinition.apiextensions.k8s.io/widgets.example.com"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, edgeLines(g, tt.kind)); diff != "" {
				t.Errorf("%s edges (-want +got):\n%s", tt.kind, diff)
			}
		})
	}
	for _, e := range g.Edges {
		if r := g.Resolve(e); r != Found {
			t.Errorf("%s (%s): resolves %s, want found", e, e.Kind, r)
		}
	}
	if b := g.Broken(); len(b) != 0 {
		t.Errorf("broken references in a complete set: %v", b)
	}
}

// TestGatewayAPIRoutes: a route's parents and backends are references the
// broken-reference check reads, with Gateway API's defaults (a Gateway
// parent, a Service backend, the route's namespace), the Service port
// checked, and backends of other kinds left to the resolver.
func TestGatewayAPIRoutes(t *testing.T) {
	g := New(parse(t, `apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {ports: [{name: http, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop}
spec:
  parentRefs: [{name: public}, {name: infra, namespace: gateways, sectionName: https}]
  rules:
  - backendRefs: [{name: api, port: 8080}, {name: api, port: 9090}]
  - backendRefs: [{name: gone, port: 80}, {group: example.com, kind: Pool, name: p}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: rpc, namespace: shop}
spec:
  parentRefs: [{name: public}]
  rules: [{backendRefs: [{name: api, port: 8080}]}]`))
	var got []string
	for _, b := range g.Broken() {
		got = append(got, b.Message())
	}
	want := []string{
		"httproute.gateway.networking.k8s.io/web -n shop (spec.parentRefs[name=public]) -> gateway.gateway.networking.k8s.io/public -n shop: does not exist",
		"httproute.gateway.networking.k8s.io/web -n shop (spec.parentRefs[name=infra]) -> gateway.gateway.networking.k8s.io/infra -n gateways: does not exist",
		"httproute.gateway.networking.k8s.io/web -n shop (spec.rules[0].backendRefs[name=api]) -> service/api -n shop: port 9090 does not exist",
		"httproute.gateway.networking.k8s.io/web -n shop (spec.rules[1].backendRefs[name=gone]) -> service/gone -n shop: does not exist",
		"httproute.gateway.networking.k8s.io/web -n shop (spec.rules[1].backendRefs[name=p]) -> pool.example.com/p -n shop: does not exist",
		"grpcroute.gateway.networking.k8s.io/rpc -n shop (spec.parentRefs[name=public]) -> gateway.gateway.networking.k8s.io/public -n shop: does not exist",
	}
	sort.Strings(want)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("broken references (-want +got):\n%s", diff)
	}
}

// TestStructuralEdgesAreNotBroken: an owner that is not in the set is no
// broken reference (the snapshot may not hold it), but it is drawn missing.
func TestStructuralEdgesAreNotBroken(t *testing.T) {
	g := New(parse(t, `apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: shop
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: gone, uid: u, controller: true}]
spec: {containers: [{name: c, image: x}]}`))
	if diff := cmp.Diff([]string{"pod/p -n shop -> replicaset.apps/gone -n shop"}, edgeLines(g, Owner)); diff != "" {
		t.Errorf("owner edges (-want +got):\n%s", diff)
	}
	if b := g.Broken(); len(b) != 0 {
		t.Errorf("an owner edge reported broken: %v", b)
	}
	v := g.View(ViewOptions{Depth: 1})
	if len(v.Nodes) != 2 || v.Nodes[1].State != StateMissing {
		t.Errorf("view nodes = %+v, want the pod and its missing owner", v.Nodes)
	}
}

func TestViewFocusDepthAndLimit(t *testing.T) {
	g := fixture(t)
	web := object.Key{Kind: "ConfigMap", Namespace: "shop", Name: "web-config"}
	labels := func(v *View) []string {
		var out []string
		for _, n := range v.Nodes {
			out = append(out, n.Label()+" "+n.State)
		}
		return out
	}
	v := g.View(ViewOptions{Seeds: []object.Key{web}, Depth: 1})
	if diff := cmp.Diff([]string{"shop/ConfigMap/web-config live", "shop/Deployment/web live"}, labels(v)); diff != "" {
		t.Errorf("depth 1 (-want +got):\n%s", diff)
	}
	// Two edges away: everything the Deployment touches, but not its
	// ReplicaSet unless children are asked for.
	v = g.View(ViewOptions{Seeds: []object.Key{web}, Depth: 2})
	if got := len(v.Nodes); got != 8 {
		t.Errorf("depth 2: %d nodes, want 8: %v", got, labels(v))
	}
	for _, n := range v.Nodes {
		if n.Ref.Kind == "ReplicaSet" {
			t.Errorf("depth 2 without children holds %s", n.Label())
		}
	}
	v = g.View(ViewOptions{Seeds: []object.Key{web}, Depth: 2, Children: true})
	if got := len(v.Nodes); got != 9 {
		t.Errorf("depth 2 with children: %d nodes, want 9: %v", got, labels(v))
	}
	// A limit keeps the seeds and the nearest first, and counts the rest.
	v = g.View(ViewOptions{Seeds: []object.Key{web}, Depth: 2, MaxNodes: 3})
	if len(v.Nodes) != 3 || v.Omitted != 5 {
		t.Errorf("limit 3: %d nodes, %d omitted, want 3 and 5", len(v.Nodes), v.Omitted)
	}
	if l := labels(v); !strings.Contains(strings.Join(l, ","), "web-config") || !strings.Contains(strings.Join(l, ","), "Deployment/web") {
		t.Errorf("limit 3 lost the seed or its neighbour: %v", l)
	}
	// Statuses colour the nodes; edges are drawn once per kind and pair.
	v = g.View(ViewOptions{Status: func(k object.Key) (Status, bool) {
		if k == web {
			return Status{State: "update", Risk: true}, true
		}
		return Status{}, false
	}, Depth: 1})
	if diff := cmp.Diff([]string{"shop/ConfigMap/web-config update", "shop/Deployment/web live"}, labels(v)); diff != "" || !v.Nodes[0].Risk {
		t.Errorf("status (-want +got):\n%s (risk %v)", diff, v.Nodes[0].Risk)
	}
	if len(v.Edges) != 1 || v.Edges[0].Kind != EnvKey {
		t.Errorf("edges = %+v, want one env-key edge", v.Edges)
	}
}

// TestForgetObjectsKeepsTheDrawing: a graph kept for drawing without its
// objects draws the same view.
func TestForgetObjectsKeepsTheDrawing(t *testing.T) {
	g := fixture(t)
	before := g.View(ViewOptions{Depth: 1})
	g.ForgetObjects()
	after := g.View(ViewOptions{Depth: 1})
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("view after ForgetObjects (-want +got):\n%s", diff)
	}
	for _, e := range g.Edges {
		if r := g.Resolve(e); r != Found {
			t.Errorf("%s resolves %s without objects", e, r)
		}
	}
}
