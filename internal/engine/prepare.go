package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/graph"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/policy"
	"github.com/snapply/snapply/internal/render"
	"github.com/snapply/snapply/internal/snapshot"
	"github.com/snapply/snapply/internal/store"
	"github.com/snapply/snapply/internal/version"
)

// Store is what a run does with its store (*store.DB): the known test reads
// the record of the last apply from it (RunRecords), the run writes its
// snapshots and its record into it, redacts Secret values with its
// redactor, and closes it.
type Store interface {
	RunRecords
	// PutSnapshot writes a snapshot of objs and returns its metadata.
	PutSnapshot(ctx context.Context, meta store.Meta, objs []*unstructured.Unstructured) (store.Meta, error)
	// PutRun writes the record of a run.
	PutRun(ctx context.Context, run store.Run) error
	// Close closes the store.
	Close() error
}

// Lock is the inventory's lock as a run holds it (*apply.Lock): the apply
// stops when it is lost, and Close releases it.
type Lock interface {
	// Lost is closed when the lock is lost while held.
	Lost() <-chan struct{}
	// Release releases the lock.
	Release() error
}

var (
	_ Store = (*store.DB)(nil)
	_ Lock  = (*apply.Lock)(nil)
)

// Prepared is the outcome of steps 1 and 2 of the pipeline: the desired
// set, the live snapshot written to the store, and the plan. Close it when
// done, also after an error (when it is not nil).
type Prepared struct {
	// Plan is the plan, with Plan.Snapshot set to Before.ID.
	Plan *plan.Plan
	// Desired is the desired set, labelled as members of the inventory.
	Desired []object.Object
	// Before is the metadata of the snapshot of the live state.
	Before store.Meta
	// After is the metadata of the after snapshot, once Deploy recorded it.
	After store.Meta
	// Inventory is the inventory (ApplySet parent) as it was loaded.
	Inventory *apply.Inventory
	// Store is the open store.
	Store Store
	// Client is the cluster client.
	Client *kube.Client

	engine   *Engine
	opts     Options
	target   Target
	live     *snapshot.Result
	members  []*unstructured.Unstructured
	lock     Lock // nil for a plan
	scope    snapshot.Scope
	refs     []object.Ref
	restores string
	graph    *graph.Graph // the plan's resource graph, objects forgotten (see Graph)

	stopPrefetch func() // stops reading schemas ahead of the analysis
	policies     *policy.Set
	known        Known
	crds         CRDGenerations
	records      Store // the store of the last apply, when not Store
}

// Close releases the lock and closes the store, once; it is safe on a
// partly prepared value.
func (p *Prepared) Close() error {
	var errs []error
	if p.lock != nil {
		errs = append(errs, p.lock.Release())
	}
	if p.records != nil {
		errs = append(errs, p.records.Close())
	}
	if p.Store != nil {
		errs = append(errs, p.Store.Close())
	}
	return errors.Join(errs...)
}

// Plan renders the target, snapshots the cluster into the store and plans
// with server-side dry runs, except for the objects the record of the last
// apply shows to be unchanged (KnownObjects; none with
// Options.Revalidate). Nothing in the cluster changes and no lock is taken.
func (e *Engine) Plan(ctx context.Context, t Target, o Options) (*Prepared, error) {
	return e.prepare(ctx, t, o, nil)
}

// PrepareApply does what Plan does, for an apply: it first takes the
// inventory's lock, waiting up to lockWait. Call Deploy on the result to
// apply it.
func (e *Engine) PrepareApply(ctx context.Context, t Target, o Options, lockWait time.Duration) (*Prepared, error) {
	return e.prepare(ctx, t, o, &lockWait)
}

func (e *Engine) prepare(ctx context.Context, t Target, o Options, lockWait *time.Duration) (*Prepared, error) {
	scope, err := snapshot.ParseScope(o.Scope)
	if err != nil {
		return nil, err
	}
	desired, client, err := e.desired(ctx, t, o)
	if err != nil {
		return nil, err
	}
	policies, err := e.loadPolicies(ctx, o)
	if err != nil {
		return nil, err
	}
	db, err := OpenStore(o.StorePath, false, o.StoreKey, e.getenv)
	if err != nil {
		return nil, err
	}
	p := &Prepared{engine: e, opts: o, target: t, Client: client, Store: db, Desired: desired, scope: scope, restores: t.Restores, policies: policies}
	if lockWait != nil {
		if err := p.takeLock(ctx, *lockWait); err != nil {
			return p, err
		}
	}
	prune, err := p.loadInventory(ctx)
	if err != nil {
		return p, err
	}
	if err := p.snapshotAndPlan(ctx, prune, lockWait != nil); err != nil {
		return p, err
	}
	return p, nil
}

// desired returns the desired set as the server will see it, and the
// client it checked it with: rendered (Helm charts against the cluster),
// then namespaces filled in and scopes checked against the cluster's
// discovery (plan.Prepare).
func (e *Engine) desired(ctx context.Context, t Target, o Options) ([]object.Object, *kube.Client, error) {
	cluster := &lazyCluster{newClient: e.NewClient}
	desired, err := e.render(ctx, t, o, cluster)
	if err != nil {
		return nil, nil, err
	}
	client, err := cluster.get(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := plan.Prepare(desired, client, client.Namespace); err != nil {
		return nil, nil, err
	}
	return desired, client, nil
}

// render returns the desired set: the target's, or PATH rendered, Helm
// charts against cluster (nil: offline, with Helm's default capabilities
// and no lookup).
func (e *Engine) render(ctx context.Context, t Target, o Options, cluster render.Cluster) ([]object.Object, error) {
	start := time.Now()
	desired := t.Desired
	if desired == nil {
		var err error
		if desired, err = render.Render(ctx, t.Path, render.Options{AllowEmpty: o.AllowEmpty, Cluster: cluster, Charts: e.remoteCharts()}); err != nil {
			return nil, err
		}
		for _, d := range desired {
			for _, f := range d.Unstable {
				e.progressf(StageRender, "%s (%s): %s is non-deterministic, will change on every apply", d.Ref, d.Source, f)
			}
		}
	}
	if t.OnRender != nil {
		t.OnRender(desired)
	}
	e.progressf(StageRender, "rendered %d objects from %s in %s", len(desired), t.Path, since(start))
	return desired, nil
}

func (p *Prepared) takeLock(ctx context.Context, wait time.Duration) error {
	e, o := p.engine, p.opts
	start := time.Now()
	lopts := apply.DefaultLockOptions()
	lopts.Holder = e.holder()
	lopts.Wait = wait
	lopts.OnWait = func(holder string) {
		e.progress(Event{Stage: StageLock, LockWaiting: true, Message: fmt.Sprintf("lock %s/%s is held by %s: waiting up to %s", o.InventoryNamespace, apply.LeaseName(o.Name), holder, wait)})
	}
	lock, err := apply.Acquire(ctx, p.Client, o.Name, o.InventoryNamespace, lopts)
	if err != nil {
		return err
	}
	p.lock = lock // set only when taken: a nil *apply.Lock in the interface is not nil for Close
	e.progressf(StageLock, "lock %s/%s taken in %s", o.InventoryNamespace, apply.LeaseName(o.Name), since(start))
	return nil
}

// loadInventory loads the inventory and its members, labels the desired
// objects as members, and returns the prune set: the members no longer
// desired and not kept.
func (p *Prepared) loadInventory(ctx context.Context) ([]object.Ref, error) {
	var err error
	if p.Inventory, err = apply.LoadInventory(ctx, p.Client, p.opts.Name, p.opts.InventoryNamespace); err != nil {
		return nil, err
	}
	if p.Inventory.Exists {
		if p.members, err = p.Inventory.Members(ctx, p.Client); err != nil {
			return nil, err
		}
	}
	desiredKeys := make(map[object.Key]bool, len(p.Desired))
	for _, d := range p.Desired {
		p.Inventory.Label(d.Obj)
		desiredKeys[d.Ref.Key()] = true
		p.refs = append(p.refs, d.Ref)
	}
	var prune []object.Ref
	for _, m := range p.members {
		ref := object.RefOf(m)
		if !desiredKeys[ref.Key()] && !p.target.Keep[ref.Key()] {
			prune = append(prune, ref)
			p.refs = append(p.refs, ref)
		}
	}
	return prune, nil
}

// snapshotAndPlan takes the snapshot and the dry runs side by side: the
// planner waits for the snapshot only when a dry run returns; the snapshot
// is written to the store while the dry runs go on.
func (p *Prepared) snapshotAndPlan(ctx context.Context, prune []object.Ref, forApply bool) error {
	e, o := p.engine, p.opts
	start := time.Now()
	sopts := snapshot.DefaultOptions()
	sopts.Scope = p.scope
	liveDone := make(chan struct{})
	stored := make(chan error, 1)
	var liveErr error
	go func() {
		p.live, liveErr = snapshot.Capture(ctx, p.Client, p.refs, sopts)
		close(liveDone)
		if liveErr != nil {
			stored <- nil
			return
		}
		e.progressf(StageSnapshot, "snapshot: %d live objects (%d list requests) in %s", len(p.live.Objects), p.live.Lists, since(start))
		meta := p.meta(store.Before)
		meta.Cluster = store.Cluster{Server: p.Client.ServerHash(), Context: p.Client.Context}
		for _, s := range p.live.Skipped {
			meta.Skipped = append(meta.Skipped, s.String())
		}
		var err error
		p.Before, err = p.Store.PutSnapshot(ctx, meta, p.live.Objects)
		stored <- err
	}()

	popts := plan.DefaultOptions()
	if o.Concurrency > 0 {
		popts.Concurrency = o.Concurrency
	}
	popts.ForceConflicts = o.ForceConflicts
	popts.Redact = p.Store.Redactor().Redact
	if forApply || !o.Revalidate {
		p.crds = ReadCRDGenerations(ctx, p.Client, p.Desired)
	}
	if o.Revalidate {
		p.known = Known{Line: "--revalidate"}
	} else {
		p.known = p.loadKnown(ctx)
	}
	if len(p.known.Fields) == 0 {
		e.progressf(StagePlan, "every object is dry-run: %s", p.known.Line)
	} else {
		e.progressf(StagePlan, "%s", p.known.Line)
	}
	in := plan.Input{Desired: p.Desired, Prune: prune, Known: p.known.Fields, LiveFunc: func() (map[object.Key]*unstructured.Unstructured, error) {
		<-liveDone
		if liveErr != nil {
			return nil, liveErr
		}
		return p.live.Index(), nil
	}}
	p.prefetchSchemas()
	var planErr error
	p.Plan, planErr = plan.Compute(ctx, p.Client, in, popts)
	<-liveDone
	storeErr := <-stored
	switch {
	case liveErr != nil:
		return liveErr
	case storeErr != nil:
		return storeErr
	case planErr != nil:
		return fmt.Errorf("plan: %w", planErr)
	}
	for _, s := range p.live.Skipped {
		e.progressf(StageSnapshot, "snapshot: skipped %s", s)
	}
	if err := checkOwnership(p.live, p.Desired, p.Inventory.ID); err != nil {
		return err
	}
	p.Plan.Snapshot = p.Before.ID
	p.analyze()
	if err := p.evalPolicies(ctx); err != nil {
		return err
	}
	dryRuns, known := p.Plan.Verification()
	e.progressf(StagePlan, "planned %d objects in %s: %d dry runs, %d known unchanged (snapshot %s)", len(p.Desired), since(start), dryRuns, known, p.Before.ID)
	return nil
}

// loadKnown runs the known test's record side against the run's store, or,
// when the store does not hold the last apply, against the store that
// Engine.Records finds.
func (p *Prepared) loadKnown(ctx context.Context) Known {
	e := p.engine
	k := KnownObjects(p.Store, p.Inventory, p.Desired, p.Client.GitVersion, p.crds)
	if !k.missing || e.Records == nil {
		return k
	}
	path, line := e.Records(ctx, p.Inventory)
	if path == "" {
		return Known{Line: line}
	}
	e.progressf(StagePlan, "%s", line)
	db, err := OpenStore(path, true, p.opts.StoreKey, e.getenv)
	if err != nil {
		return Known{Line: fmt.Sprintf("the store of the last apply: %v", err)}
	}
	p.records = db
	return KnownObjects(db, p.Inventory, p.Desired, p.Client.GitVersion, p.crds)
}

// meta returns the metadata of a new snapshot of this run.
func (p *Prepared) meta(kind store.Kind) store.Meta {
	m := store.Meta{
		Kind:        kind,
		Cluster:     p.Before.Cluster,
		Source:      p.engine.Source,
		ToolVersion: version.Version,
		Scope:       string(p.scope),
	}
	m.Source.Restores = p.restores
	return m
}

// checkOwnership refuses desired objects that are live members of another
// ApplySet: applying them would move them silently from one inventory to
// another, and the other one would prune them next time.
func checkOwnership(live *snapshot.Result, desired []object.Object, id string) error {
	idx := live.Index()
	for _, d := range desired {
		u := idx[d.Ref.Key()]
		if u == nil {
			continue
		}
		if other, ok := u.GetLabels()[apply.PartOfLabel]; ok && other != id {
			return fmt.Errorf("%s (%s): belongs to another inventory (%s=%s); remove it from one of the two sets, or delete the label to hand it over", d.Ref, d.Source, apply.PartOfLabel, other)
		}
	}
	return nil
}
