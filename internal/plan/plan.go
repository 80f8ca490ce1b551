// Package plan computes what applying a desired set of objects would do to a
// cluster. It is pure apart from the Cluster interface it defines, through
// which it asks the API server for server-side-apply dry runs: the
// classification, diff and image logic is testable without a cluster.
package plan

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
)

// ForceAnnotation on a desired object lets snapply take the fields other
// managers own on that object only.
const ForceAnnotation = "snapply.dev/force-conflicts"

// Cluster is what the planner asks of the API server.
type Cluster interface {
	// Scope reports whether the server serves gvk and whether it is
	// namespaced.
	Scope(gvk schema.GroupVersionKind) (served, namespaced bool, err error)
	// DryRunApply server-side applies obj as a dry run (field manager
	// snapply, strict field validation) and returns the result and the
	// server's warnings. Errors are the API server's.
	DryRunApply(ctx context.Context, obj *unstructured.Unstructured, force bool) (*unstructured.Unstructured, []string, error)
	// Get reads the live object named by obj's identity in obj's API
	// version; it returns nil and no error when the object does not exist.
	Get(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// Options controls planning.
type Options struct {
	// Concurrency bounds the dry runs in flight.
	Concurrency int
	// ForceConflicts plans every object as if applied with force.
	ForceConflicts bool
	// Redact replaces Secret values before objects are diffed; nil leaves
	// objects as they are (tests only: a plan's diff must never show a
	// Secret value).
	Redact func(*unstructured.Unstructured) *unstructured.Unstructured
	// DiffContext is the number of context lines around each diff hunk.
	DiffContext int
}

// DefaultOptions returns the options of `snapply plan`.
func DefaultOptions() Options {
	return Options{Concurrency: 16, DiffContext: 3}
}

// Input is what a plan is computed from.
type Input struct {
	// Desired is the rendered set, namespaces already defaulted (Prepare).
	Desired []object.Object
	// Live is the snapshot of the cluster, by identity.
	Live map[object.Key]*unstructured.Unstructured
	// LiveFunc, when Live is nil, returns the snapshot. It is called once,
	// when the first dry run returns, so that the snapshot can be taken
	// while the dry runs run: the two together take the time of the
	// longer, not of both.
	LiveFunc func() (map[object.Key]*unstructured.Unstructured, error)
	// Prune names the objects to delete: inventory members that are no
	// longer desired. Their live state comes from the snapshot; one that is
	// not in it is gone already and not planned.
	Prune []object.Ref
	// Known maps desired objects that the record of the last apply shows to
	// be applied exactly as they are (the caller checks the desired object,
	// the server version and the CRD generation against its records) to
	// AppliedFields of the object as that apply left it. When the live
	// object's AppliedFields is still that digest, nobody took a field from
	// snapply since, applying the object is a no-op, and it is planned
	// unchanged without a request (Verified "record"). Anything else is
	// dry-run. Empty means every object is dry-run (--revalidate).
	Known map[object.Key]string
}

// Compute plans in against the cluster. Per-object answers of the API server
// (conflict, invalid) become changes; a failure to get an answer at all
// (unreachable server, forbidden, timeout) fails the whole plan, naming the
// object, so that no plan is ever half-reported.
func Compute(ctx context.Context, cl Cluster, in Input, opts Options) (*Plan, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultOptions().Concurrency
	}
	p := &planner{cl: cl, in: in, opts: opts, newNamespaces: map[string]bool{}}
	if err := p.index(ctx); err != nil {
		return nil, err
	}
	if in.Live != nil || in.LiveFunc == nil {
		p.liveOnce.Do(func() {}) // use in.Live as it is
	}

	changes := make([]Change, len(in.Desired))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for _, i := range dryRunsFirst(in) {
		d := in.Desired[i]
		g.Go(func() error {
			c, err := p.change(gctx, d)
			if err != nil {
				return fmt.Errorf("%s (%s): %w", d.Ref, d.Source, kube.Explain(err))
			}
			changes[i] = c
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, ref := range in.Prune {
		live, err := p.live(ref.Key())
		if err != nil {
			return nil, err
		}
		if live != nil {
			changes = append(changes, p.deletion(live))
		}
	}
	sort.SliceStable(changes, func(i, j int) bool { return object.Compare(changes[i].Ref, changes[j].Ref) < 0 })
	return &Plan{Summary: Summarize(changes), Changes: changes}, nil
}

// dryRunsFirst returns the indices of in.Desired with the objects that are
// not known first: a known object waits for the snapshot, and must not
// hold a slot that a dry run could use meanwhile.
func dryRunsFirst(in Input) []int {
	order := make([]int, 0, len(in.Desired))
	for _, known := range []bool{false, true} {
		for i, d := range in.Desired {
			if _, ok := in.Known[d.Ref.Key()]; ok == known {
				order = append(order, i)
			}
		}
	}
	return order
}

type planner struct {
	cl   Cluster
	in   Input
	opts Options

	namespaces    map[string]bool           // Namespaces of the desired set
	newNamespaces map[string]bool           // those of them that are not live
	crdKinds      map[schema.GroupKind]bool // kinds the desired CRDs define
	liveOnce      sync.Once
	liveErr       error
	mu            sync.Mutex
	scopes        map[schema.GroupVersionKind]bool // served kinds seen
}

func (p *planner) index(ctx context.Context) error {
	p.namespaces = map[string]bool{}
	p.crdKinds = map[schema.GroupKind]bool{}
	p.scopes = map[schema.GroupVersionKind]bool{}
	for _, d := range p.in.Desired {
		switch {
		case d.Ref.Group == "" && d.Ref.Kind == "Namespace":
			p.namespaces[d.Ref.Name] = true
		case isCRD(d.Ref):
			if gk, ok := crdGroupKind(d.Obj); ok {
				p.crdKinds[gk] = true
			}
		}
	}
	// A Namespace of the set that is not live yet: its objects are
	// pending, without a dry run the server would only refuse. One GET per
	// desired Namespace: the snapshot may still be running.
	for _, d := range p.in.Desired {
		if d.Ref.Group != "" || d.Ref.Kind != "Namespace" {
			continue
		}
		live, err := p.cl.Get(ctx, d.Obj)
		if err != nil {
			return fmt.Errorf("%s (%s): %w", d.Ref, d.Source, kube.Explain(err))
		}
		if live == nil {
			p.newNamespaces[d.Ref.Name] = true
		}
	}
	return nil
}

// live returns the live object with identity k, waiting for the snapshot
// when it is still being taken.
func (p *planner) live(k object.Key) (*unstructured.Unstructured, error) {
	p.liveOnce.Do(func() {
		p.in.Live, p.liveErr = p.in.LiveFunc()
	})
	if p.liveErr != nil {
		return nil, p.liveErr
	}
	return p.in.Live[k], nil
}

func (p *planner) served(gvk schema.GroupVersionKind) (bool, error) {
	p.mu.Lock()
	s, ok := p.scopes[gvk]
	p.mu.Unlock()
	if ok {
		return s, nil
	}
	s, _, err := p.cl.Scope(gvk)
	if err != nil {
		return false, err
	}
	p.mu.Lock()
	p.scopes[gvk] = s
	p.mu.Unlock()
	return s, nil
}

// change plans one desired object.
func (p *planner) change(ctx context.Context, d object.Object) (Change, error) {
	c := Change{Ref: d.Ref, Source: d.Source, Warnings: UnstableWarnings(d)}
	served, err := p.served(d.Ref.GroupVersionKind())
	if err != nil {
		return c, err
	}
	switch {
	case !served && p.crdKinds[d.Ref.GroupKind()]:
		return p.pending(c, d, "its CustomResourceDefinition is created by this plan: the server validates it at apply time"), nil
	case !served:
		c.Action = Invalid
		c.Message = fmt.Sprintf("the server does not serve %s in %s (unknown kind or API version; is its CRD installed?)", d.Ref.Kind, d.Ref.APIVersion())
		return c, nil
	case d.Ref.Namespace != "" && p.newNamespaces[d.Ref.Namespace]:
		return p.pending(c, d, fmt.Sprintf("its namespace %s is created by this plan: the server validates it at apply time", d.Ref.Namespace)), nil
	}

	if fields, ok := p.in.Known[d.Ref.Key()]; ok && fields != "" {
		live, err := p.live(d.Ref.Key())
		if err != nil {
			return c, err
		}
		if live != nil && AppliedFields(live) == fields {
			c.Action, c.LiveResourceVersion = Unchanged, live.GetResourceVersion()
			c.Verified, c.Applied = VerifiedRecord, fields
			c.Before, c.After = live, live
			return c, nil
		}
	}
	c.Verified = VerifiedDryRun

	force := p.opts.ForceConflicts || d.Obj.GetAnnotations()[ForceAnnotation] == "true"
	after, warnings, err := p.cl.DryRunApply(ctx, d.Obj, false)
	if err != nil && apierrors.IsNotFound(err) && d.Ref.Namespace != "" && p.namespaces[d.Ref.Namespace] {
		// The server cannot dry-run into a namespace that does not exist
		// yet; this plan creates it.
		c.Verified = ""
		return p.pending(c, d, fmt.Sprintf("its namespace %s is created by this plan: the server validates it at apply time", d.Ref.Namespace)), nil
	}
	live, lerr := p.live(d.Ref.Key())
	if lerr != nil {
		return c, lerr
	}
	if live != nil {
		c.LiveResourceVersion = live.GetResourceVersion()
	}
	for _, w := range warnings {
		if warned, ok := kube.AdmissionWarning(w); ok {
			// A ValidatingAdmissionPolicy in Warn mode: a warn verdict
			// that names it, in place of a raw warning.
			c.Policy = append(c.Policy, PolicyResult{Rule: warned.Rule(), Level: PolicyWarn, Message: warned.Reason, Admission: true})
			continue
		}
		c.Warnings = append(c.Warnings, w)
	}
	c.Before, c.After = live, d.Obj
	if denial, ok := kube.Denial(err); ok {
		// The cluster's own policy refused it: a policy denial that names
		// the policy or webhook.
		c.Action = Invalid
		c.Message = kube.Message(err)
		c.Policy = append(c.Policy, PolicyResult{Rule: denial.Rule(), Level: PolicyDeny, Message: denial.Reason, Admission: true})
		return c, nil
	}
	if conflicts, ok := kube.Conflicts(err); ok {
		for _, fc := range conflicts {
			c.Conflicts = append(c.Conflicts, FieldConflict{Field: fc.Field, Manager: fc.Manager})
		}
		if !force {
			c.Action = Conflict
			c.Message = ConflictHelp
			// Show what forcing would change, so that people can choose.
			if forced, _, ferr := p.cl.DryRunApply(ctx, d.Obj, true); ferr == nil {
				c.Diff = p.diff(c.Ref, live, forced)
			}
			return c, nil
		}
		after, _, err = p.cl.DryRunApply(ctx, d.Obj, true)
		c.Message = "takes fields from other managers (force-conflicts)"
	}
	if err != nil {
		if kube.IsInvalid(err) {
			c.Action = Invalid
			c.Message = kube.Message(err)
			return c, nil
		}
		return c, err
	}

	if live != nil && live.GetAPIVersion() != after.GetAPIVersion() {
		// The snapshot listed the server's preferred version; compare in
		// the version the desired object uses.
		if live, err = p.cl.Get(ctx, d.Obj); err != nil {
			return c, err
		}
	}
	c.Before, c.After = live, after
	switch {
	case live == nil:
		c.Action = Create
		c.After = d.Obj // enough for the analysis, and kept anyway
	case Equal(live, after):
		c.Action = Unchanged
		c.After = live // the same; the dry run's copy need not be kept
		c.Applied = AppliedFields(after)
		return c, nil
	default:
		c.Action = Update
	}
	c.Diff = p.diff(c.Ref, live, after)
	c.Images = ImageChanges(live, after)
	return c, nil
}

// UnstableWarnings returns one warning per field of d that its source
// renders differently every time (a Helm chart's randAlphaNum): applying
// d changes it on every apply.
func UnstableWarnings(d object.Object) []string {
	var out []string
	for _, f := range d.Unstable {
		out = append(out, f+": non-deterministic, will change on every apply (the chart renders a new value each time)")
	}
	return out
}

// ConflictHelp is the message of a conflict: the two ways out.
const ConflictHelp = "fields owned by other managers: change git to accept the live value, " +
	"or force this object (annotation " + ForceAnnotation + `: "true", or --force-conflicts)`

func (p *planner) pending(c Change, d object.Object, why string) Change {
	c.Action = Pending
	c.Message = why
	c.After = d.Obj
	c.Diff = p.diff(c.Ref, nil, d.Obj)
	c.Images = ImageChanges(nil, d.Obj)
	return c
}

func (p *planner) deletion(live *unstructured.Unstructured) Change {
	ref := object.RefOf(live)
	c := Change{Ref: ref, Action: Delete, LiveResourceVersion: live.GetResourceVersion(), Before: live}
	if (ref.Group == "" && ref.Kind == "Namespace") || isCRD(ref) {
		c.Destructive = true
		c.Message = "deletes everything inside it"
		if isCRD(ref) {
			c.Message = "deletes every custom resource of this kind"
		}
	}
	c.Diff = p.diff(ref, live, nil)
	c.Images = ImageChanges(live, nil)
	return c
}

func (p *planner) diff(ref object.Ref, before, after *unstructured.Unstructured) string {
	if p.opts.Redact != nil {
		if before != nil {
			before = p.opts.Redact(before)
		}
		if after != nil {
			after = p.opts.Redact(after)
		}
	}
	return Diff(ref.String(), before, after, p.opts.DiffContext)
}

func isCRD(r object.Ref) bool {
	return r.Group == "apiextensions.k8s.io" && r.Kind == "CustomResourceDefinition"
}

func crdGroupKind(u *unstructured.Unstructured) (schema.GroupKind, bool) {
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
	if group == "" || kind == "" {
		return schema.GroupKind{}, false
	}
	return schema.GroupKind{Group: group, Kind: kind}, true
}
