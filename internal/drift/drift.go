// Package drift compares the desired state in git with the live cluster,
// field by field, for the objects an inventory manages: which fields git
// sets have another value live, which field manager wrote it and when
// (from managedFields), which objects were deleted out of band, which
// fields another manager took with a force-apply, and, on request, the
// objects of the managed namespaces that nothing owns. It is pure apart
// from the Cluster interface it defines; package report renders a Report.
package drift

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

// Manager is snapply's field manager.
const Manager = "snapply"

// Cluster is what a drift check asks of the API server.
type Cluster interface {
	// DryRunApply server-side applies obj as a dry run (field manager
	// snapply) and returns the result. Errors are the API server's.
	DryRunApply(ctx context.Context, obj *unstructured.Unstructured, force bool) (*unstructured.Unstructured, []string, error)
	// Get reads the live object named by obj's identity in obj's API
	// version; nil and no error when it does not exist.
	Get(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// Input is what a drift check compares.
type Input struct {
	// Desired is the rendered set, namespaces defaulted and labelled as
	// members of the inventory (what apply would send).
	Desired []object.Object
	// Live is the snapshot of the cluster, by identity.
	Live map[object.Key]*unstructured.Unstructured
	// Members are the live members of the inventory.
	Members []object.Ref
	// Orphans asks for the unowned objects of the namespaces of Desired;
	// Live must then hold those namespaces whole.
	Orphans bool
	// Ignore names live objects that are never orphans (the inventory's
	// own Secret and Lease).
	Ignore map[object.Key]bool
}

// Options controls a drift check.
type Options struct {
	// Concurrency bounds the dry runs in flight.
	Concurrency int
	// Redact replaces Secret values before objects are compared or
	// diffed; nil leaves them (tests only).
	Redact func(*unstructured.Unstructured) *unstructured.Unstructured
}

// DefaultOptions returns the options of `snapply drift`.
func DefaultOptions() Options { return Options{Concurrency: 16} }

// Compute checks in against the cluster. A failure to get an answer from
// the API server fails the whole check, naming the object.
func Compute(ctx context.Context, cl Cluster, in Input, opts Options) (*Report, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultOptions().Concurrency
	}
	results := make([]Object, len(in.Desired))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for i, d := range in.Desired {
		g.Go(func() error {
			o, err := check(gctx, cl, d, in.Live[d.Ref.Key()], opts)
			if err != nil {
				return fmt.Errorf("%s (%s): %w", d.Ref, d.Source, kube.Explain(err))
			}
			results[i] = o
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	r := &Report{Objects: []Object{}}
	desired := make(map[object.Key]bool, len(in.Desired))
	for _, o := range results {
		desired[o.Ref.Key()] = true
		r.Summary.add(o.State)
		if o.State != InSync {
			r.Objects = append(r.Objects, o)
		}
	}
	for _, m := range in.Members {
		if desired[m.Key()] {
			continue
		}
		o := newObject(m, Extra)
		o.Message = "in the inventory, no longer in git: the next apply prunes it"
		if live := in.Live[m.Key()]; live != nil {
			o.Diff = diff(m, live, nil, opts)
		}
		r.Summary.add(Extra)
		r.Objects = append(r.Objects, o)
	}
	if in.Orphans {
		for _, o := range orphans(in, desired) {
			r.Summary.add(Orphan)
			r.Objects = append(r.Objects, o)
		}
	}
	slices.SortStableFunc(r.Objects, func(a, b Object) int { return object.Compare(a.Ref, b.Ref) })
	return r, nil
}

func newObject(ref object.Ref, st State) Object {
	return Object{Ref: ref, State: st, Fields: []Field{}, Ownership: []Ownership{}}
}

// ReapplyHelp says how to make the cluster match git again, or git the
// cluster.
const ReapplyHelp = "re-apply to restore git's values, or adopt the live values in git (paste the adopt patch)"

// check compares one desired object with its live state.
func check(ctx context.Context, cl Cluster, d object.Object, live *unstructured.Unstructured, opts Options) (Object, error) {
	o := newObject(d.Ref, InSync)
	o.Source = Source{File: d.Source.File, Line: d.Source.Line}
	if live == nil {
		o.State = Missing
		o.Message = "in git, not in the cluster (deleted out of band): re-apply to create it"
		o.Diff = diff(d.Ref, nil, d.Obj, opts)
		return o, nil
	}
	after, _, err := cl.DryRunApply(ctx, d.Obj, false)
	if _, ok := kube.Conflicts(err); ok {
		// Another manager owns fields git sets, with other values: what
		// a re-apply with force would leave is the object as git says.
		after, _, err = cl.DryRunApply(ctx, d.Obj, true)
	}
	if err != nil {
		if kube.IsInvalid(err) {
			o.State = Invalid
			o.Message = kube.Message(err)
			return o, nil
		}
		if apierrors.IsNotFound(err) {
			o.State = Missing
			o.Message = "in git, not in the cluster (deleted out of band): re-apply to create it"
			return o, nil
		}
		return o, err
	}
	if live.GetAPIVersion() != after.GetAPIVersion() {
		// The snapshot lists the server's preferred version; compare in
		// the version git uses.
		if live, err = cl.Get(ctx, d.Obj); err != nil {
			return o, err
		}
		if live == nil {
			o.State = Missing
			o.Message = "in git, not in the cluster (deleted out of band): re-apply to create it"
			return o, nil
		}
	}
	if opts.Redact != nil {
		live, after = opts.Redact(live), opts.Redact(after)
	}
	var paths []fieldpath.Path
	o.Fields, o.Ownership, paths = compareFields(live, after)
	if len(o.Fields) > 0 || len(o.Ownership) > 0 {
		o.State = Drifted
		o.Message = ReapplyHelp
		o.Diff = diff(d.Ref, live, after, Options{})
		o.Adopt = adoptPatch(live, paths)
	}
	return o, nil
}

func diff(ref object.Ref, live, git *unstructured.Unstructured, opts Options) string {
	if opts.Redact != nil {
		if live != nil {
			live = opts.Redact(live)
		}
		if git != nil {
			git = opts.Redact(git)
		}
	}
	return plan.DiffSides(ref.String(), "live", "git", live, git, 3)
}

// orphans returns the live objects of the namespaces of the desired set
// that belong to no inventory, that no owner reference points to a
// parent of, and that the cluster does not make by itself.
func orphans(in Input, desired map[object.Key]bool) []Object {
	namespaces := map[string]bool{}
	for _, d := range in.Desired {
		if d.Ref.Namespace != "" {
			namespaces[d.Ref.Namespace] = true
		}
	}
	var out []Object
	for k, u := range in.Live {
		if !namespaces[k.Namespace] || desired[k] || in.Ignore[k] || builtIn(k) {
			continue
		}
		if _, member := u.GetLabels()[apply.PartOfLabel]; member {
			continue
		}
		if len(u.GetOwnerReferences()) > 0 {
			continue
		}
		o := newObject(object.RefOf(u), Orphan)
		o.Message = "in a managed namespace, in no inventory, owned by nothing: put it in git, or delete it"
		out = append(out, o)
	}
	return out
}

// builtIn reports whether the cluster itself puts k into every namespace,
// or makes it for another object: never an orphan.
func builtIn(k object.Key) bool {
	switch {
	case k.Group == "" && k.Kind == "ConfigMap" && k.Name == "kube-root-ca.crt":
		return true
	case k.Group == "" && k.Kind == "ServiceAccount" && k.Name == "default":
		return true
	case k.Group == "" && k.Kind == "Endpoints":
		return true // kept by the endpoints controller for a Service
	case k.Group == "discovery.k8s.io" && k.Kind == "EndpointSlice":
		return true
	case k.Group == "coordination.k8s.io" && k.Kind == "Lease":
		return true // leader election and snapply's own lock
	case k.Group == "events.k8s.io" || (k.Group == "" && k.Kind == "Event"):
		return true
	}
	return strings.HasPrefix(k.Name, "kube-") && k.Group == "" && k.Kind == "ConfigMap"
}
