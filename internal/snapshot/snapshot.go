// Package snapshot captures the live state of a cluster: every object of the
// desired set, every inventory member, and, depending on the scope, all the
// objects of their namespaces or of the whole cluster. It lists each type
// (per namespace where that applies) with paginated LIST requests, in
// parallel, and reports the types it could not list instead of failing.
package snapshot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/text"
)

// Scope says how much of the cluster a snapshot holds.
type Scope string

// The scopes.
const (
	// ScopeManaged captures only the desired objects and the inventory members.
	ScopeManaged Scope = "managed"
	// ScopeNamespaces also captures every object of the namespaces those live
	// in (the default).
	ScopeNamespaces Scope = "namespaces"
	// ScopeCluster captures every listable object of the cluster.
	ScopeCluster Scope = "cluster"
)

// ParseScope parses a --scope value.
func ParseScope(s string) (Scope, error) {
	switch sc := Scope(s); sc {
	case ScopeManaged, ScopeNamespaces, ScopeCluster:
		return sc, nil
	}
	return "", fmt.Errorf("unknown scope %q: want managed, namespaces or cluster", s)
}

// Options controls a capture.
type Options struct {
	// Scope says how much to capture.
	Scope Scope
	// Concurrency bounds the LIST requests in flight.
	Concurrency int
	// PageSize is the limit of one LIST page.
	PageSize int64
	// Exclude names the high-churn resources that are never captured, as
	// "resource.group" ("events" for the core group).
	Exclude []string
}

// DefaultOptions returns the options of `snapply plan`.
func DefaultOptions() Options {
	return Options{
		Scope:       ScopeNamespaces,
		Concurrency: 16,
		PageSize:    500,
		Exclude: []string{
			"events",
			"events.events.k8s.io",
			"leases.coordination.k8s.io",
			"pods.metrics.k8s.io",
			"nodes.metrics.k8s.io",
		},
	}
}

// Skipped is a type the capture could not list.
type Skipped struct {
	// Resource is "resource.group/version" ("pods/v1" for the core group).
	Resource string `json:"resource"`
	// GVR is the type that was skipped; for a whole API group whose
	// discovery failed, only its Group and Version are set.
	GVR schema.GroupVersionResource `json:"-"`
	// Reason is the server's answer, like "forbidden".
	Reason string `json:"reason"`
}

// String prints "resource: reason".
func (s Skipped) String() string { return s.Resource + ": " + s.Reason }

// Result is a captured point in time.
type Result struct {
	// Objects are the live objects, sorted by object.Compare.
	Objects []*unstructured.Unstructured
	// Skipped lists the types that could not be listed.
	Skipped []Skipped
	// Lists counts the LIST requests made.
	Lists int
}

// Index returns the captured objects by identity.
func (r *Result) Index() map[object.Key]*unstructured.Unstructured {
	m := make(map[object.Key]*unstructured.Unstructured, len(r.Objects))
	for _, o := range r.Objects {
		m[object.RefOf(o).Key()] = o
	}
	return m
}

// listTask is one LIST: a resource in one namespace ("" for all), and, when
// keep is set, the identities to keep from it (others are dropped).
type listTask struct {
	gvr  schema.GroupVersionResource
	gvk  schema.GroupVersionKind
	ns   string
	keep map[object.Key]bool
}

// Capture reads the live state for refs (the desired objects and the
// inventory members) in the given scope. Kinds the server does not know (a
// custom resource whose CRD is not installed yet) are not listed and not
// reported as skipped: there is nothing live to capture.
func Capture(ctx context.Context, c *kube.Client, refs []object.Ref, opts Options) (*Result, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultOptions().Concurrency
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultOptions().PageSize
	}
	tasks, skipped, err := listTasks(ctx, c, refs, opts)
	if err != nil {
		return nil, err
	}
	res := &Result{Skipped: skipped, Lists: 0}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for _, t := range tasks {
		g.Go(func() error {
			objs, lists, err := list(gctx, c, t, opts.PageSize)
			mu.Lock()
			defer mu.Unlock()
			res.Lists += lists
			if err != nil {
				if reason, ok := skippable(err); ok {
					res.Skipped = append(res.Skipped, Skipped{Resource: resourceName(t.gvr), GVR: t.gvr, Reason: reason})
					return nil
				}
				where := ""
				if t.ns != "" {
					where = " in namespace " + t.ns
				}
				return fmt.Errorf("snapshot: list %s%s: %w", resourceName(t.gvr), where, kube.Unreachable(c.Config.Host, err))
			}
			res.Objects = append(res.Objects, objs...)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	res.Objects = dedupe(res.Objects)
	sort.Slice(res.Skipped, func(i, j int) bool { return res.Skipped[i].Resource < res.Skipped[j].Resource })
	res.Skipped = slices.Compact(res.Skipped)
	return res, nil
}

// listTasks turns refs and the scope into LIST tasks.
func listTasks(ctx context.Context, c *kube.Client, refs []object.Ref, opts Options) ([]listTask, []Skipped, error) {
	excluded := map[string]bool{}
	for _, e := range opts.Exclude {
		excluded[e] = true
	}
	var tasks []listTask
	var skipped []Skipped

	// The managed objects themselves: one LIST per kind and namespace,
	// keeping only the objects named.
	type kindNS struct {
		gk schema.GroupKind
		ns string
	}
	byKindNS := map[kindNS]map[object.Key]bool{}
	namespaces := map[string]bool{}
	for _, r := range refs {
		k := kindNS{gk: r.GroupKind(), ns: r.Namespace}
		if byKindNS[k] == nil {
			byKindNS[k] = map[object.Key]bool{}
		}
		byKindNS[k][r.Key()] = true
		if r.Namespace != "" {
			namespaces[r.Namespace] = true
		}
		if r.Group == "" && r.Kind == "Namespace" {
			namespaces[r.Name] = true
		}
	}

	var resources []discovered
	if opts.Scope != ScopeManaged {
		var err error
		resources, skipped, err = listable(c, excluded)
		if err != nil {
			return nil, nil, err
		}
	}
	// covered reports whether a scope-wide LIST already returns the objects
	// of this kind in this namespace.
	covered := func(gk schema.GroupKind, ns string) bool {
		return slices.ContainsFunc(resources, func(d discovered) bool {
			if d.gvk.GroupKind() != gk {
				return false
			}
			return opts.Scope == ScopeCluster || d.namespaced && ns != ""
		})
	}
	keys := make([]kindNS, 0, len(byKindNS))
	for k := range byKindNS {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].gk.String()+keys[i].ns < keys[j].gk.String()+keys[j].ns })
	for _, k := range keys {
		if covered(k.gk, k.ns) {
			continue
		}
		m, err := c.Mapping(k.gk.WithVersion(""))
		if err != nil {
			if meta.IsNoMatchError(err) {
				continue // not served (yet): nothing live to capture
			}
			return nil, nil, fmt.Errorf("snapshot: %s: %w", k.gk, err)
		}
		ns := k.ns
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			ns = ""
		}
		tasks = append(tasks, listTask{gvr: m.Resource, gvk: m.GroupVersionKind, ns: ns, keep: byKindNS[k]})
	}

	switch opts.Scope {
	case ScopeNamespaces:
		nsList := make([]string, 0, len(namespaces))
		for ns := range namespaces {
			nsList = append(nsList, ns)
		}
		sort.Strings(nsList)
		for _, d := range resources {
			if !d.namespaced {
				continue
			}
			for _, ns := range nsList {
				tasks = append(tasks, listTask{gvr: d.gvr, gvk: d.gvk, ns: ns})
			}
		}
	case ScopeCluster:
		for _, d := range resources {
			tasks = append(tasks, listTask{gvr: d.gvr, gvk: d.gvk})
		}
	}
	return tasks, skipped, ctx.Err()
}

// discovered is a listable resource the server serves.
type discovered struct {
	gvr        schema.GroupVersionResource
	gvk        schema.GroupVersionKind
	namespaced bool
}

// listable returns the server's preferred version of every listable resource
// that is not excluded. Groups whose discovery fails are reported as skipped.
func listable(c *kube.Client, excluded map[string]bool) ([]discovered, []Skipped, error) {
	lists, err := c.Discovery.ServerPreferredResources()
	var skipped []Skipped
	if err != nil {
		var gdf *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &gdf) {
			return nil, nil, fmt.Errorf("snapshot: discovery: %w", kube.Unreachable(c.Config.Host, err))
		}
		for gv, gerr := range gdf.Groups {
			skipped = append(skipped, Skipped{Resource: gv.String(), GVR: gv.WithResource(""), Reason: "discovery failed: " + text.OneLine(gerr.Error())})
		}
	}
	var out []discovered
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}
			if excluded[gr.String()] {
				continue
			}
			out = append(out, discovered{
				gvr:        gv.WithResource(r.Name),
				gvk:        gv.WithKind(r.Kind),
				namespaced: r.Namespaced,
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].gvr.String() < out[j].gvr.String() })
	return out, skipped, nil
}

// list runs one paginated LIST and returns the objects it keeps and the
// number of requests it made.
func list(ctx context.Context, c *kube.Client, t listTask, pageSize int64) ([]*unstructured.Unstructured, int, error) {
	ri := c.Dynamic.Resource(t.gvr)
	var res interface {
		List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
	} = ri
	if t.ns != "" {
		res = ri.Namespace(t.ns)
	}
	var out []*unstructured.Unstructured
	requests := 0
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		var l *unstructured.UnstructuredList
		n, err := kube.Retry(ctx, func() error {
			var err error
			l, err = res.List(ctx, opts)
			return err
		})
		requests += n
		if err != nil {
			if apierrors.IsResourceExpired(err) && opts.Continue != "" {
				// The continue token expired: start over.
				out, opts.Continue = nil, ""
				continue
			}
			return nil, requests, err
		}
		for i := range l.Items {
			o := &l.Items[i]
			o.SetGroupVersionKind(t.gvk)
			if t.keep != nil && !t.keep[object.RefOf(o).Key()] {
				continue
			}
			out = append(out, o)
		}
		if l.GetContinue() == "" {
			return out, requests, nil
		}
		opts.Continue = l.GetContinue()
	}
}

// skippable reports whether a LIST error means "this identity may not or
// cannot list this type" rather than a failure of the capture.
func skippable(err error) (string, bool) {
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden", true
	case apierrors.IsMethodNotSupported(err):
		return "list not supported", true
	case apierrors.IsNotFound(err):
		return "not served", true
	case apierrors.IsServiceUnavailable(err):
		return "service unavailable", true
	}
	return "", false
}

// dedupe drops the second copy of an object listed twice (a managed object
// that a namespace-wide list also returned) and sorts the rest.
func dedupe(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	sort.SliceStable(objs, func(i, j int) bool { return object.Compare(object.RefOf(objs[i]), object.RefOf(objs[j])) < 0 })
	return slices.CompactFunc(objs, func(a, b *unstructured.Unstructured) bool {
		return object.RefOf(a).Key() == object.RefOf(b).Key()
	})
}

func resourceName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource + "/" + gvr.Version
	}
	return gvr.Resource + "." + gvr.Group + "/" + gvr.Version
}
