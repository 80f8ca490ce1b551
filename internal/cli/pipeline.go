package cli

import (
	"context"
	"fmt"
	"os"
	"time"

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
}

// prepared is the outcome of steps 1 and 2 of the pipeline: the desired set,
// the live snapshot written to the store, and the plan.
type prepared struct {
	client  *kube.Client
	db      *store.DB
	desired []object.Object
	live    *snapshot.Result
	before  store.Meta
	plan    *plan.Plan
}

// prepare renders path, snapshots the cluster into the store and plans. The
// caller closes p.db (also on error, when p is not nil).
func (g *globals) prepare(ctx context.Context, path string, o prepareOptions) (*prepared, error) {
	scope, err := snapshot.ParseScope(o.scope)
	if err != nil {
		return nil, err
	}

	start := time.Now()
	desired, err := render.Render(ctx, path, render.Options{AllowEmpty: o.allowEmpty})
	if err != nil {
		return nil, err
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

	db, err := store.Open(o.storePath, store.DefaultOptions())
	if err != nil {
		return nil, err
	}
	p := &prepared{client: client, db: db, desired: desired}

	start = time.Now()
	refs := make([]object.Ref, len(desired))
	for i, d := range desired {
		refs[i] = d.Ref
	}
	sopts := snapshot.DefaultOptions()
	sopts.Scope = scope
	p.live, err = snapshot.Capture(ctx, client, refs, sopts)
	if err != nil {
		return p, err
	}
	meta := store.Meta{
		Kind:        store.Before,
		Cluster:     store.Cluster{Server: client.ServerHash(), Context: client.Context},
		Source:      sourceFromEnv(),
		ToolVersion: version.Version,
		Scope:       string(scope),
	}
	for _, s := range p.live.Skipped {
		meta.Skipped = append(meta.Skipped, s.String())
	}
	if p.before, err = db.PutSnapshot(ctx, meta, p.live.Objects); err != nil {
		return p, err
	}
	g.progress("snapshot %s: %d live objects (%d list requests) in %s", p.before.ID, len(p.live.Objects), p.live.Lists, since(start))
	for _, s := range p.live.Skipped {
		g.progress("snapshot: skipped %s", s)
	}

	start = time.Now()
	popts := plan.DefaultOptions()
	if o.concurrency > 0 {
		popts.Concurrency = o.concurrency
	}
	popts.ForceConflicts = o.force
	popts.Redact = db.Redactor().Redact
	p.plan, err = plan.Compute(ctx, client, plan.Input{Desired: desired, Live: p.live.Index()}, popts)
	if err != nil {
		return p, fmt.Errorf("plan: %w", err)
	}
	p.plan.Snapshot = p.before.ID
	g.progress("planned %d objects with server-side dry runs in %s", len(desired), since(start))
	return p, nil
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
