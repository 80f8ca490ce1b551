package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/report"
	"github.com/snapply/snapply/internal/snapshot"
	"github.com/snapply/snapply/internal/store"
	"github.com/snapply/snapply/internal/version"
)

// applyOptions are the flags of `snapply apply`.
type applyOptions struct {
	prepareOptions
	output           string
	prune            bool
	wait             bool
	timeout          time.Duration
	allowDestructive bool
}

func newApplyCommand(g *globals) *cobra.Command {
	o := applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply PATH",
		Short: "Make the cluster match PATH: server-side apply in waves, prune, wait",
		Long: `apply takes the same snapshot and plan as ` + "`snapply plan`" + `, then applies with
server-side apply in dependency order (CRDs and Namespaces, prerequisites,
workloads, webhooks), prunes the objects of its inventory that left PATH,
waits until what it applied is ready, and records every object's outcome in
the store. It never takes a field another manager owns unless forced.

A Lease per inventory (--name) serialises applies: a second apply waits for
the first, up to --timeout.

Exit codes: 0 when every object reached its planned state; 1 otherwise (a
conflict, an invalid object, a failed write, a readiness timeout, an
interrupt). What was applied stays applied and is recorded.`,
		Example: `  snapply apply ./overlays/prod --name prod
  snapply apply ./overlays/prod --name prod --timeout 10m -o json
  snapply apply ./overlays/prod --name prod --force-conflicts`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			return g.runApply(cmd.Context(), args[0], o)
		},
	}
	f := cmd.Flags()
	addCommonFlags(f, &o.prepareOptions)
	f.StringVarP(&o.output, "output", "o", "text", "output format: text, markdown or json")
	f.BoolVar(&o.prune, "prune", true, "delete the inventory's objects that are no longer in PATH")
	f.BoolVar(&o.wait, "wait", true, "wait until the applied objects are ready (kstatus)")
	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long to wait for the lock, and for readiness")
	f.BoolVar(&o.allowDestructive, "allow-destructive", false, "let the prune delete Namespaces and CustomResourceDefinitions")
	return cmd
}

func (g *globals) runApply(ctx context.Context, path string, o applyOptions) (err error) {
	o.lock, o.lockWait = true, o.timeout
	p, err := g.prepare(ctx, path, o.prepareOptions)
	if p != nil {
		defer func() { err = errors.Join(err, p.close()) }()
	}
	if err != nil {
		return err
	}
	if o.output == "text" && !g.quiet {
		if err := g.render(g.io.Err, p.plan, "text"); err != nil {
			return err
		}
	}
	res, recErr := g.deploy(ctx, p, o)
	if res == nil {
		return recErr
	}
	if err := g.renderResult(g.io.Out, res, o.output); err != nil {
		return errors.Join(err, recErr)
	}
	return applyExit(res, recErr)
}

// applyExit maps the outcome of an apply to the exit code.
func applyExit(res *apply.Result, recErr error) error {
	if recErr != nil {
		return fmt.Errorf("apply: recording the outcome: %w", recErr)
	}
	if !res.OK() {
		return &ExitError{Code: 1, Err: resultError(res)}
	}
	return nil
}

// deploy runs steps 3 and 4 of the pipeline on a prepared plan: it records
// the desired set, updates the inventory, applies, and records the outcome.
// A nil result comes with the error that stopped it before anything was
// written; a result may come with an error about recording it.
func (g *globals) deploy(ctx context.Context, p *prepared, o applyOptions) (*apply.Result, error) {
	// The live objects of the plan are not needed any more: let them go,
	// before the apply's own allocations.
	p.live = nil

	// The desired set goes into the store while the apply runs (PutSnapshot
	// only reads the objects; so do the writes).
	desiredObjs := make([]*unstructured.Unstructured, len(p.desired))
	for i, d := range p.desired {
		desiredObjs[i] = d.Obj
	}
	type putResult struct {
		meta store.Meta
		err  error
	}
	desiredPut := make(chan putResult, 1)
	go func() {
		m, err := p.db.PutSnapshot(context.WithoutCancel(ctx), p.meta(store.Desired, p.restores), desiredObjs)
		desiredPut <- putResult{m, err}
	}()
	waitDesired := func() (store.Meta, error) {
		r := <-desiredPut
		desiredPut <- r
		return r.meta, r.err
	}

	// KEP-3659: the parent lists a superset of the members' kinds and
	// namespaces before any member is written.
	changed := p.plan.HasChanges()
	if changed || !p.inv.Exists {
		p.inv.GroupKinds, p.inv.Namespaces = union(p.inv, p.desired, nil)
		if err := p.inv.Save(ctx, p.client); err != nil {
			_, _ = waitDesired()
			return nil, err
		}
	}

	aopts := apply.DefaultOptions()
	if o.concurrency > 0 {
		aopts.Concurrency = o.concurrency
	}
	aopts.ForceConflicts = o.force
	aopts.Prune = o.prune
	aopts.AllowDestructive = o.allowDestructive
	aopts.Wait = o.wait
	aopts.WaitOptions.Timeout = o.timeout
	aopts.Progress = g.applyProgress()
	aopts.WaitOptions.Progress = g.waitProgress()
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
	res, err := apply.Run(runCtx, p.client, p.plan, p.desired, aopts)
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
	afterMeta, recErr := g.record(recCtx, p, res, desiredMeta)
	p.after = afterMeta
	if recErr == nil && (changed || !p.inv.Exists) {
		p.inv.GroupKinds, p.inv.Namespaces = union(nil, p.desired, res)
		p.inv.Annotations = map[string]string{
			apply.LastRunAnnotation:       holder(),
			apply.LastSnapshotAnnotation:  afterMeta.ID,
			apply.LastAppliedAtAnnotation: time.Now().UTC().Format(time.RFC3339),
		}
		src := sourceFromEnv()
		if src.Commit != "" {
			p.inv.Annotations[apply.LastCommitAnnotation] = src.Commit
		}
		if src.RunID != "" {
			p.inv.Annotations[apply.LastRunIDAnnotation] = src.RunID
		}
		recErr = p.inv.Save(recCtx, p.client)
	}
	return res, recErr
}

// meta returns the metadata of a new snapshot of this run.
func (p *prepared) meta(kind store.Kind, restores string) store.Meta {
	m := store.Meta{
		Kind:        kind,
		Cluster:     p.before.Cluster,
		Source:      sourceFromEnv(),
		ToolVersion: version.Version,
		Scope:       string(p.scope),
	}
	m.Source.Restores = restores
	return m
}

// record writes the after snapshot and the per-object records.
func (g *globals) record(ctx context.Context, p *prepared, res *apply.Result, desired store.Meta) (store.Meta, error) {
	// The after snapshot holds the managed objects (desired and pruned):
	// what the run changed, which is what a rollback restores; the before
	// snapshot already holds the rest of their namespaces.
	sopts := snapshot.DefaultOptions()
	sopts.Scope = snapshot.ScopeManaged
	// The outcome of every object is known even when the cluster cannot
	// be read back (the API server went away mid-apply): then the records
	// are kept without an after snapshot.
	withoutAfter := func(err error) (store.Meta, error) {
		if perr := p.db.PutRun(ctx, p.run(res, desired, "")); perr != nil {
			return store.Meta{}, errors.Join(err, perr)
		}
		g.progress("recorded the outcome in %s without an after snapshot: snapshot %s (before)", p.db.Path(), p.before.ID)
		return store.Meta{}, err
	}
	after, err := snapshot.Capture(ctx, p.client, p.refs, sopts)
	if err != nil {
		return withoutAfter(err)
	}
	meta := p.meta(store.After, p.restores)
	meta.Scope = string(snapshot.ScopeManaged)
	afterMeta, err := p.db.PutSnapshot(ctx, meta, after.Objects)
	if err != nil {
		return withoutAfter(err)
	}
	if err := p.db.PutRun(ctx, p.run(res, desired, afterMeta.ID)); err != nil {
		return afterMeta, err
	}
	g.progress("recorded the outcome in %s: snapshots %s (before), %s (after)", p.db.Path(), p.before.ID, afterMeta.ID)
	return afterMeta, nil
}

// run returns the record of this run: its snapshots (after may be empty)
// and one record per object.
func (p *prepared) run(res *apply.Result, desired store.Meta, after string) store.Run {
	run := store.Run{Before: p.before.ID, Desired: desired.ID, After: after, Source: p.before.Source, Interrupted: res.Interrupted, Duration: res.Duration}
	for _, r := range res.Records {
		run.Records = append(run.Records, store.Record{
			Ref: r.Ref, Action: string(r.Action), Outcome: string(r.Outcome), Error: r.Error,
			Readiness: string(r.Readiness), Started: r.Started, Duration: r.Duration,
		})
	}
	return run
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

// renderResult writes the result in the chosen format.
func (g *globals) renderResult(w io.Writer, res *apply.Result, output string) error {
	switch output {
	case "json":
		return report.ResultJSON(w, res)
	case "markdown":
		return report.ResultMarkdown(w, res, report.DefaultResultMarkdownOptions())
	}
	opts := report.DefaultTextOptions()
	opts.Color = g.useColor(w)
	return report.ResultText(w, res, opts)
}

func resultError(res *apply.Result) error {
	s := res.Summary
	msg := fmt.Sprintf("apply failed: %d failed, %d not attempted, %d not ready", s.Failed, s.NotAttempted, s.NotReady)
	if res.Interrupted {
		msg = "apply interrupted: " + msg[len("apply failed: "):]
	}
	return errors.New(msg)
}

// applyProgress prints the start and end of each wave and every failure.
func (g *globals) applyProgress() func(apply.Event) {
	return func(e apply.Event) {
		switch {
		case e.Record != nil && (e.Record.Outcome == apply.Failed):
			g.progress("  failed %s: %s", e.Record.Ref, e.Record.Error)
		case e.Record != nil:
		case e.End:
			g.progress("%s: %d objects done in %s", e.Wave, e.Done, e.Elapsed.Round(time.Millisecond))
		default:
			g.progress("%s: %d objects...", e.Wave, e.Total)
		}
	}
}

// waitProgress prints how many objects are ready, at most every 5 seconds.
func (g *globals) waitProgress() func(ready, total int, pending []apply.Readiness) {
	var last time.Time
	return func(ready, total int, pending []apply.Readiness) {
		if time.Since(last) < 5*time.Second && ready < total {
			return
		}
		last = time.Now()
		line := fmt.Sprintf("wait: %d/%d ready", ready, total)
		if len(pending) > 0 {
			line += fmt.Sprintf("; waiting for %s (%s: %s)", pending[0].Ref, pending[0].Status, pending[0].Message)
			if len(pending) > 1 {
				line += fmt.Sprintf(" and %d more", len(pending)-1)
			}
		}
		g.progress("%s", line)
	}
}
