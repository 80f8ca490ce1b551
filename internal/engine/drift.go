package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/snapply/snapply/internal/drift"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/snapshot"
	"github.com/snapply/snapply/internal/store"
)

// StageDrift is the step of a drift check that compares git with the
// cluster.
const StageDrift Stage = "drift"

// DriftOptions are the settings of a drift check beyond Options.
type DriftOptions struct {
	// Orphans also reports the objects of the managed namespaces that
	// belong to no inventory and that nothing owns. It needs the
	// namespaces scope (or cluster): a managed scope is widened.
	Orphans bool
}

// Drift renders the target (git), snapshots the cluster into the store as
// plan does, and compares every object the inventory manages with git,
// field by field, with the field manager that wrote each live value.
// Nothing in the cluster changes and no lock is taken. The inventory must
// exist: a name that was never applied has nothing to drift from.
func (e *Engine) Drift(ctx context.Context, t Target, o Options, d DriftOptions) (rep *drift.Report, err error) {
	scope, err := snapshot.ParseScope(o.Scope)
	if err != nil {
		return nil, err
	}
	if d.Orphans && scope == snapshot.ScopeManaged {
		scope = snapshot.ScopeNamespaces
	}
	desired, client, err := e.desired(ctx, t, o)
	if err != nil {
		return nil, err
	}
	db, err := OpenStore(o.StorePath, false, o.StoreKey, e.getenv)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	p := &Prepared{engine: e, opts: o, target: t, Client: client, Store: db, Desired: desired, scope: scope}
	if _, err := p.loadInventory(ctx); err != nil {
		return nil, err
	}
	if !p.Inventory.Exists {
		return nil, fmt.Errorf("inventory %s: not found: nothing was applied under this name to drift from (check --name and --inventory-namespace)", p.Inventory)
	}

	start := time.Now()
	sopts := snapshot.DefaultOptions()
	sopts.Scope = scope
	live, err := snapshot.Capture(ctx, client, p.refs, sopts)
	if err != nil {
		return nil, err
	}
	for _, s := range live.Skipped {
		e.progressf(StageSnapshot, "snapshot: skipped %s", s)
	}
	meta := p.meta(store.Before)
	meta.Cluster = store.Cluster{Server: client.ServerHash(), Context: client.Context}
	for _, s := range live.Skipped {
		meta.Skipped = append(meta.Skipped, s.String())
	}
	if p.Before, err = db.PutSnapshot(ctx, meta, live.Objects); err != nil {
		return nil, err
	}
	e.progressf(StageSnapshot, "snapshot: %d live objects (%d list requests) in %s", len(live.Objects), live.Lists, since(start))

	in := drift.Input{Desired: desired, Live: live.Index(), Orphans: d.Orphans, Ignore: map[object.Key]bool{
		{Kind: "Secret", Namespace: p.Inventory.Namespace, Name: p.Inventory.Name}: true,
	}}
	for _, m := range p.members {
		in.Members = append(in.Members, object.RefOf(m))
	}
	dopts := drift.DefaultOptions()
	if o.Concurrency > 0 {
		dopts.Concurrency = o.Concurrency
	}
	dopts.Redact = db.Redactor().Redact
	if rep, err = drift.Compute(ctx, client, in, dopts); err != nil {
		return nil, fmt.Errorf("drift: %w", err)
	}
	rep.Snapshot = p.Before.ID
	rep.Inventory = p.Inventory.Namespace + "/" + p.Inventory.Name
	e.progressf(StageDrift, "compared %d objects with git in %s: %d drifted, %d missing (snapshot %s)", len(desired), since(start), rep.Summary.Drifted, rep.Summary.Missing, p.Before.ID)
	return rep, nil
}
