package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/snapshot"
	"github.com/snapply/snapply/internal/store"
)

// DeployOptions are the settings of steps 3 and 4 (apply and record).
type DeployOptions struct {
	// Prune deletes the inventory's objects that left the target.
	Prune bool
	// Wait waits for readiness, up to Timeout.
	Wait    bool
	Timeout time.Duration
	// AllowDestructive lets the prune delete Namespaces and CRDs.
	AllowDestructive bool
}

// DefaultDeployOptions returns the defaults of `snapply apply`.
func DefaultDeployOptions() DeployOptions {
	return DeployOptions{Prune: true, Wait: true, Timeout: 5 * time.Minute}
}

// Deploy runs steps 3 and 4 of the pipeline on a prepared plan: it records
// the desired set, updates the inventory, applies, prunes, waits, and
// records the outcome. A nil result comes with the error that stopped it
// before anything was written; a result may come with an error about
// recording it.
func (p *Prepared) Deploy(ctx context.Context, o DeployOptions) (*apply.Result, error) {
	if err := p.Plan.PolicyError(); err != nil {
		return nil, fmt.Errorf("%w; nothing applied", err)
	}
	// The live objects of the plan are not needed any more: let them go,
	// before the apply's own allocations.
	p.live = nil

	// The desired set goes into the store while the apply runs (PutSnapshot
	// only reads the objects; so do the writes).
	desiredObjs := make([]*unstructured.Unstructured, len(p.Desired))
	for i, d := range p.Desired {
		desiredObjs[i] = d.Obj
	}
	type putResult struct {
		meta store.Meta
		err  error
	}
	desiredPut := make(chan putResult, 1)
	go func() {
		m, err := p.Store.PutSnapshot(context.WithoutCancel(ctx), p.meta(store.Desired), desiredObjs)
		desiredPut <- putResult{m, err}
	}()
	waitDesired := func() (store.Meta, error) {
		r := <-desiredPut
		desiredPut <- r
		return r.meta, r.err
	}

	// KEP-3659: the parent lists a superset of the members' kinds and
	// namespaces before any member is written.
	changed := p.Plan.HasChanges()
	if changed || !p.Inventory.Exists {
		p.Inventory.GroupKinds, p.Inventory.Namespaces = union(p.Inventory, p.Desired, nil)
		if err := p.Inventory.Save(ctx, p.Client); err != nil {
			_, _ = waitDesired()
			return nil, err
		}
	}

	res, err := p.apply(ctx, o)
	desiredMeta, putErr := waitDesired()
	if err != nil {
		return nil, err
	}
	if putErr != nil {
		return res, putErr
	}

	// Record the outcome: the after snapshot and one record per object.
	// This runs even when interrupted, on a context of its own.
	recCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	afterMeta, recErr := p.record(recCtx, res, desiredMeta)
	p.After = afterMeta
	if recErr == nil && (changed || !p.Inventory.Exists) {
		recErr = p.saveInventoryRecord(recCtx, res, afterMeta.ID)
	}
	return res, recErr
}

// apply runs the plan, cancelled when the lock is lost.
func (p *Prepared) apply(ctx context.Context, o DeployOptions) (*apply.Result, error) {
	e := p.engine
	aopts := apply.DefaultOptions()
	if p.opts.Concurrency > 0 {
		aopts.Concurrency = p.opts.Concurrency
	}
	aopts.ForceConflicts = p.opts.ForceConflicts
	aopts.Prune = o.Prune
	aopts.AllowDestructive = o.AllowDestructive
	aopts.Wait = o.Wait
	aopts.WaitOptions.Timeout = o.Timeout
	aopts.Progress = func(ev apply.Event) { e.progress(Event{Stage: StageApply, Apply: &ev}) }
	aopts.WaitOptions.Progress = func(ready, total int, pending []apply.Readiness) {
		e.progress(Event{Stage: StageWait, Ready: ready, Total: total, Pending: pending})
	}
	runCtx := ctx
	if p.lock != nil {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-p.lock.Lost():
				cancel()
			case <-runCtx.Done():
			}
		}()
	}
	return apply.Run(runCtx, p.Client, p.Plan, p.Desired, aopts)
}

// saveInventoryRecord writes what the run applied onto the inventory: the
// kinds and namespaces of its members, and the last applied commit, run
// and snapshot.
func (p *Prepared) saveInventoryRecord(ctx context.Context, res *apply.Result, after string) error {
	inv := p.Inventory
	inv.GroupKinds, inv.Namespaces = union(nil, p.Desired, res)
	inv.Annotations = map[string]string{
		apply.LastRunAnnotation:       p.engine.holder(),
		apply.LastSnapshotAnnotation:  after,
		apply.LastAppliedAtAnnotation: time.Now().UTC().Format(time.RFC3339),
	}
	src := p.engine.Source
	if src.Commit != "" {
		inv.Annotations[apply.LastCommitAnnotation] = src.Commit
	}
	if src.RunID != "" {
		inv.Annotations[apply.LastRunIDAnnotation] = src.RunID
	}
	return inv.Save(ctx, p.Client)
}

// record writes the after snapshot and the per-object records.
func (p *Prepared) record(ctx context.Context, res *apply.Result, desired store.Meta) (store.Meta, error) {
	// The after snapshot holds the managed objects (desired and pruned):
	// what the run changed, which is what a rollback restores; the before
	// snapshot already holds the rest of their namespaces.
	sopts := snapshot.DefaultOptions()
	sopts.Scope = snapshot.ScopeManaged
	run := p.run(ctx, res, desired)
	after, err := snapshot.Capture(ctx, p.Client, p.refs, sopts)
	if err != nil {
		return p.recordWithoutAfter(ctx, run, err)
	}
	return p.recordWithAfter(ctx, run, after.Objects)
}

// recordWithAfter writes the after snapshot of objs, then run with it.
func (p *Prepared) recordWithAfter(ctx context.Context, run store.Run, objs []*unstructured.Unstructured) (store.Meta, error) {
	meta := p.meta(store.After)
	meta.Scope = string(snapshot.ScopeManaged)
	afterMeta, err := p.Store.PutSnapshot(ctx, meta, objs)
	if err != nil {
		return p.recordWithoutAfter(ctx, run, err)
	}
	run.After = afterMeta.ID
	if err := p.Store.PutRun(ctx, run); err != nil {
		return afterMeta, err
	}
	p.engine.progressf(StageRecord, "recorded the outcome in %s: snapshots %s (before), %s (after)", p.Store.Path(), p.Before.ID, afterMeta.ID)
	return afterMeta, nil
}

// recordWithoutAfter writes run without an after snapshot and returns err,
// the reason there is none: the outcome of every object is known even when
// the cluster cannot be read back (the API server went away mid-apply).
func (p *Prepared) recordWithoutAfter(ctx context.Context, run store.Run, err error) (store.Meta, error) {
	if perr := p.Store.PutRun(ctx, run); perr != nil {
		return store.Meta{}, errors.Join(err, perr)
	}
	p.engine.progressf(StageRecord, "recorded the outcome in %s without an after snapshot: snapshot %s (before)", p.Store.Path(), p.Before.ID)
	return store.Meta{}, err
}

// run returns the record of this run, without its after snapshot: its
// snapshots, the server version, and one record per object, with what the
// next known test compares (docs/design.md, "Known objects").
func (p *Prepared) run(ctx context.Context, res *apply.Result, desired store.Meta) store.Run {
	run := store.Run{
		Before: p.Before.ID, Desired: desired.ID, Source: p.Before.Source, Interrupted: res.Interrupted,
		Duration: res.Duration, ServerVersion: p.Client.GitVersion,
	}
	// The CRDs this run applied have moved on: read their generations
	// again for the custom resources applied after them.
	appliedCRD := map[schema.GroupKind]bool{}
	for _, r := range res.Records {
		if r.Outcome == apply.Applied && isCRD(r.Ref) {
			if d := p.desiredObject(r.Ref); d != nil {
				if gk, ok := crdKind(d); ok {
					appliedCRD[gk] = true
				}
			}
		}
	}
	var afterApply CRDGenerations
	if len(appliedCRD) > 0 {
		afterApply = ReadCRDGenerations(ctx, p.Client, p.Desired)
	}
	for i, r := range res.Records {
		sr := r.StoreRecord()
		if sr.Fields != "" {
			sr.CRDGeneration = crdGenerationOf(res.Plan.Changes[i], p.known, p.crds, afterApply, appliedCRD)
		}
		run.Records = append(run.Records, sr)
	}
	return run
}

// desiredObject returns the desired object named ref, or nil.
func (p *Prepared) desiredObject(ref object.Ref) *object.Object {
	for i := range p.Desired {
		if p.Desired[i].Ref.Key() == ref.Key() {
			return &p.Desired[i]
		}
	}
	return nil
}

// union returns the group kinds and namespaces the inventory must list:
// those of inv (before the apply), of the desired objects, and of the
// members a result could not prune.
func union(inv *apply.Inventory, desired []object.Object, res *apply.Result) ([]schema.GroupKind, []string) {
	var gks []schema.GroupKind
	var nss []string
	add := func(r object.Ref) {
		if gk := r.GroupKind(); !slices.Contains(gks, gk) {
			gks = append(gks, gk)
		}
		if r.Namespace != "" && !slices.Contains(nss, r.Namespace) {
			nss = append(nss, r.Namespace)
		}
	}
	if inv != nil {
		gks = append(gks, inv.GroupKinds...)
		nss = append(nss, inv.Namespaces...)
	}
	for _, d := range desired {
		add(d.Ref)
	}
	if res != nil {
		for _, r := range res.Records {
			if r.Action == plan.Delete && r.Outcome != apply.Pruned {
				add(r.Ref)
			}
		}
	}
	return gks, nss
}
