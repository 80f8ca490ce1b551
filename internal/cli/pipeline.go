package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/render"
	"github.com/snapply/snapply/internal/snapshot"
	"github.com/snapply/snapply/internal/store"
	"github.com/snapply/snapply/internal/version"
)

// prepareOptions are the flags shared by the commands that plan.
type prepareOptions struct {
	storePath   string
	scope       string
	concurrency int
	allowEmpty  bool
	force       bool
	// name and inventoryNS name the inventory (ApplySet parent).
	name        string
	inventoryNS string
	// lock takes the inventory's Lease before the snapshot, waiting up to
	// lockWait; apply sets it, plan does not.
	lock     bool
	lockWait time.Duration
	// onRender, when set, sees the desired objects before anything else
	// happens (the action masks their Secret values in the log).
	onRender func([]object.Object)
	// desired, when set, is the desired set: PATH is not rendered (a
	// rollback restores a set recorded in the store).
	desired []object.Object
	// restores is the ID of the snapshot a rollback restores, recorded in
	// the source of the run's snapshots.
	restores string
	// keep lists inventory members that are not desired and must not be
	// pruned either (a rollback leaves a Secret whose values it cannot
	// restore as it is live).
	keep map[object.Key]bool
}

// prepared is the outcome of steps 1 and 2 of the pipeline: the desired set,
// the live snapshot written to the store, and the plan.
type prepared struct {
	client  *kube.Client
	db      *store.DB
	desired []object.Object
	live    *snapshot.Result
	before  store.Meta
	after   store.Meta // set by deploy
	plan    *plan.Plan
	inv     *apply.Inventory
	members []*unstructured.Unstructured
	lock    *apply.Lock
	scope   snapshot.Scope
	refs    []object.Ref
	// restores is the snapshot a rollback restores; empty otherwise.
	restores string
}

// close releases the lock and closes the store; it is safe on a partly
// prepared value.
func (p *prepared) close() error {
	var errs []error
	if p.lock != nil {
		errs = append(errs, p.lock.Release())
	}
	if p.db != nil {
		errs = append(errs, p.db.Close())
	}
	return errors.Join(errs...)
}

// prepare renders path, snapshots the cluster into the store and plans. The
// caller closes p.db (also on error, when p is not nil).
func (g *globals) prepare(ctx context.Context, path string, o prepareOptions) (*prepared, error) {
	scope, err := snapshot.ParseScope(o.scope)
	if err != nil {
		return nil, err
	}

	start := time.Now()
	desired := o.desired
	if desired == nil {
		if desired, err = render.Render(ctx, path, render.Options{AllowEmpty: o.allowEmpty}); err != nil {
			return nil, err
		}
	}
	if o.onRender != nil {
		o.onRender(desired)
	}
	g.progress("rendered %d objects from %s in %s", len(desired), path, since(start))

	client, err := kube.NewClient(g.kube, kube.DefaultOptions())
	if err != nil {
		return nil, err
	}
	if err := client.Ping(ctx); err != nil {
		return nil, err
	}
	if err := plan.Prepare(desired, client, client.Namespace); err != nil {
		return nil, err
	}

	db, err := openStore(o.storePath, false) // with SNAPPLY_STORE_KEY, if set
	if err != nil {
		return nil, err
	}
	p := &prepared{client: client, db: db, desired: desired, scope: scope, restores: o.restores}

	if o.lock {
		start = time.Now()
		lopts := apply.DefaultLockOptions()
		lopts.Holder = holder()
		lopts.Wait = o.lockWait
		if p.lock, err = apply.Acquire(ctx, client, o.name, o.inventoryNS, lopts); err != nil {
			return p, err
		}
		g.progress("lock %s/snapply-%s taken in %s", o.inventoryNS, o.name, since(start))
	}
	if p.inv, err = apply.LoadInventory(ctx, client, o.name, o.inventoryNS); err != nil {
		return p, err
	}
	if p.inv.Exists {
		if p.members, err = p.inv.Members(ctx, client); err != nil {
			return p, err
		}
	}
	desiredKeys := make(map[object.Key]bool, len(desired))
	for _, d := range desired {
		p.inv.Label(d.Obj)
		desiredKeys[d.Ref.Key()] = true
		p.refs = append(p.refs, d.Ref)
	}
	var prune []object.Ref
	for _, m := range p.members {
		ref := object.RefOf(m)
		if !desiredKeys[ref.Key()] && !o.keep[ref.Key()] {
			prune = append(prune, ref)
			p.refs = append(p.refs, ref)
		}
	}

	// The snapshot and the dry runs run side by side: the planner waits for
	// the snapshot only when a dry run returns; the snapshot is written to
	// the store while the dry runs go on.
	start = time.Now()
	sopts := snapshot.DefaultOptions()
	sopts.Scope = scope
	liveDone := make(chan struct{})
	stored := make(chan error, 1)
	var liveErr error
	go func() {
		p.live, liveErr = snapshot.Capture(ctx, client, p.refs, sopts)
		close(liveDone)
		if liveErr != nil {
			stored <- nil
			return
		}
		g.progress("snapshot: %d live objects (%d list requests) in %s", len(p.live.Objects), p.live.Lists, since(start))
		meta := store.Meta{
			Kind:        store.Before,
			Cluster:     store.Cluster{Server: client.ServerHash(), Context: client.Context},
			Source:      sourceFromEnv(),
			ToolVersion: version.Version,
			Scope:       string(scope),
		}
		meta.Source.Restores = o.restores
		for _, s := range p.live.Skipped {
			meta.Skipped = append(meta.Skipped, s.String())
		}
		var err error
		p.before, err = db.PutSnapshot(ctx, meta, p.live.Objects)
		stored <- err
	}()

	popts := plan.DefaultOptions()
	if o.concurrency > 0 {
		popts.Concurrency = o.concurrency
	}
	popts.ForceConflicts = o.force
	popts.Redact = db.Redactor().Redact
	var known map[object.Key]string
	if o.lock { // apply: see knownApplied
		known = knownApplied(db, p.inv, desired)
	}
	in := plan.Input{Desired: desired, Prune: prune, Known: known, LiveFunc: func() (map[object.Key]*unstructured.Unstructured, error) {
		<-liveDone
		if liveErr != nil {
			return nil, liveErr
		}
		return p.live.Index(), nil
	}}
	var planErr error
	p.plan, planErr = plan.Compute(ctx, client, in, popts)
	<-liveDone
	storeErr := <-stored
	switch {
	case liveErr != nil:
		return p, liveErr
	case storeErr != nil:
		return p, storeErr
	case planErr != nil:
		return p, fmt.Errorf("plan: %w", planErr)
	}
	for _, s := range p.live.Skipped {
		g.progress("snapshot: skipped %s", s)
	}
	if err := checkOwnership(p.live, desired, p.inv.ID); err != nil {
		return p, err
	}
	p.plan.Snapshot = p.before.ID
	g.progress("planned %d objects with server-side dry runs in %s (snapshot %s)", len(desired), since(start), p.before.ID)
	return p, nil
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

// holder names this run for others waiting on the lock: the GitHub Actions
// run URL when there is one, else user@host and the process ID.
func holder() string {
	if server, repo, run := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_REPOSITORY"), os.Getenv("GITHUB_RUN_ID"); server != "" && repo != "" && run != "" {
		return fmt.Sprintf("%s/%s/actions/runs/%s", server, repo, run)
	}
	host, _ := os.Hostname()
	user := os.Getenv("USER")
	if user == "" {
		user = "unknown"
	}
	return fmt.Sprintf("%s@%s pid %d", user, host, os.Getpid())
}

// sourceFromEnv records where a run came from when it runs inside a GitHub
// Actions job; outside one every field is empty.
func sourceFromEnv() store.Source {
	return store.Source{
		Commit:     os.Getenv("GITHUB_SHA"),
		Ref:        os.Getenv("GITHUB_REF"),
		RunID:      os.Getenv("GITHUB_RUN_ID"),
		RunAttempt: os.Getenv("GITHUB_RUN_ATTEMPT"),
		Workflow:   os.Getenv("GITHUB_WORKFLOW"),
		Actor:      os.Getenv("GITHUB_ACTOR"),
		Repository: os.Getenv("GITHUB_REPOSITORY"),
	}
}

func since(t time.Time) time.Duration {
	return time.Since(t).Round(time.Millisecond)
}
