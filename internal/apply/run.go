package apply

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

// Options controls an apply.
type Options struct {
	// Concurrency bounds the writes in flight inside a wave.
	Concurrency int
	// ForceConflicts takes fields other managers own, on every object.
	ForceConflicts bool
	// Prune deletes the plan's delete changes.
	Prune bool
	// AllowDestructive lets a prune delete Namespaces and CRDs.
	AllowDestructive bool
	// Wait waits for the applied objects to become ready.
	Wait bool
	// WaitOptions bounds and reports the wait.
	WaitOptions WaitOptions
	// CRDTimeout bounds the wait for new CRDs to be Established.
	CRDTimeout time.Duration
	// Progress, when set, is told about each step; the command layer prints.
	Progress func(Event)
}

// DefaultOptions returns the options of `snapply apply`.
func DefaultOptions() Options {
	return Options{
		Concurrency: 16,
		Prune:       true,
		Wait:        true,
		WaitOptions: DefaultWaitOptions(),
		CRDTimeout:  time.Minute,
	}
}

// Event is a step of an apply, for progress output.
type Event struct {
	// Wave is the wave name, or "prune" or "wait".
	Wave string
	// Record is set for an object that finished a write or was skipped with
	// an error; nil for the start and end of a wave.
	Record *Record
	// Done and Total count the objects of the wave.
	Done, Total int
	// Elapsed is set at the end of a wave.
	Elapsed time.Duration
	// End marks the end of a wave.
	End bool
}

// DestructiveError refuses a plan that deletes Namespaces or CRDs without
// Options.AllowDestructive. Nothing has been changed when it is returned.
type DestructiveError struct {
	Refs []object.Ref
}

// Error implements error.
func (e *DestructiveError) Error() string {
	return fmt.Sprintf("the plan deletes %d Namespace or CustomResourceDefinition objects (first: %s), which deletes everything inside them; refusing without --allow-destructive", len(e.Refs), e.Refs[0])
}

// Run applies p: the desired objects in waves with server-side apply, then
// the prune, then the wait. desired must be the objects p was computed from
// (labelled for the inventory). Run records an outcome for every change of
// the plan, whatever happens; its error is reserved for not starting at all
// (a destructive prune without permission). Failed objects, conflicts and
// timeouts are in the Result: check Result.OK.
func Run(ctx context.Context, c *kube.Client, p *plan.Plan, desired []object.Object, opts Options) (*Result, error) {
	start := time.Now()
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultOptions().Concurrency
	}
	if opts.Prune && !opts.AllowDestructive {
		var refs []object.Ref
		for _, ch := range p.Changes {
			if ch.Action == plan.Delete && ch.Destructive {
				refs = append(refs, ch.Ref)
			}
		}
		if len(refs) > 0 {
			return nil, &DestructiveError{Refs: refs}
		}
	}

	objs := make(map[object.Key]object.Object, len(desired))
	for _, d := range desired {
		objs[d.Ref.Key()] = d
	}
	r := &runner{c: c, opts: opts, objs: objs, res: &Result{Plan: p, Records: make([]Record, len(p.Changes))}}
	byWave := make([][]int, numWaves)
	var prunes []int
	for i, ch := range p.Changes {
		r.res.Records[i] = Record{Ref: ch.Ref, Source: ch.Source, Action: ch.Action}
		if ch.Action == plan.Delete {
			prunes = append(prunes, i)
			continue
		}
		w := WaveOf(ch.Ref)
		r.res.Records[i].Wave = w.String()
		byWave[w] = append(byWave[w], i)
	}

	for w := range numWaves {
		r.wave(ctx, w.String(), byWave[w], r.apply)
		if w == WaveDefinitions {
			r.establishCRDs(ctx, byWave[w])
		}
	}
	r.prune(ctx, prunes)
	if opts.Wait {
		r.wait(ctx)
	}
	r.res.Interrupted = ctx.Err() != nil
	r.res.summarize()
	r.res.Duration = time.Since(start)
	return r.res, nil
}

type runner struct {
	c    *kube.Client
	opts Options
	objs map[object.Key]object.Object
	res  *Result
	mu   sync.Mutex // guards res.Records while a wave runs
}

func (r *runner) progress(e Event) {
	if r.opts.Progress != nil {
		r.opts.Progress(e)
	}
}

// wave runs do for each record index, opts.Concurrency at a time. Once ctx
// is done no new write starts: the remaining records are marked
// NotAttempted. Writes in flight finish on a context that outlives the
// interrupt (bounded), so that their outcome is known and recorded.
func (r *runner) wave(ctx context.Context, name string, idx []int, do func(ctx context.Context, i int)) {
	if len(idx) == 0 {
		return
	}
	start := time.Now()
	r.progress(Event{Wave: name, Total: len(idx)})
	sem := make(chan struct{}, r.opts.Concurrency)
	var wg sync.WaitGroup
	done := 0
	for _, i := range idx {
		rec := &r.res.Records[i]
		select {
		case <-ctx.Done():
		case sem <- struct{}{}:
		}
		if ctx.Err() != nil {
			if rec.Outcome == "" {
				rec.Outcome, rec.Error = NotAttempted, "interrupted before it was written"
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			do(wctx, i)
			r.mu.Lock()
			done++
			e := Event{Wave: name, Record: rec, Done: done, Total: len(idx)}
			r.mu.Unlock()
			r.progress(e)
		}()
	}
	wg.Wait()
	r.progress(Event{Wave: name, Done: done, Total: len(idx), Elapsed: time.Since(start), End: true})
}

// apply writes one desired object according to its planned action.
func (r *runner) apply(ctx context.Context, i int) {
	rec, ch := &r.res.Records[i], r.res.Plan.Changes[i]
	switch ch.Action {
	case plan.Unchanged:
		// Not written: the object stays as the plan found it, whose
		// entry the plan checked.
		rec.Outcome, rec.Fields = Unchanged, ch.Applied
		return
	case plan.Conflict:
		rec.Outcome, rec.Error = NotAttempted, conflictError(ch)
		return
	case plan.Invalid:
		rec.Outcome, rec.Error = NotAttempted, "invalid: "+ch.Message
		return
	}
	d, ok := r.objs[ch.Ref.Key()]
	if !ok {
		rec.Outcome, rec.Error = NotAttempted, "not in the desired set given to apply"
		return
	}
	force := r.opts.ForceConflicts || d.Obj.GetAnnotations()[plan.ForceAnnotation] == "true"
	rec.Started = time.Now()
	defer func() { rec.Duration = time.Since(rec.Started) }()

	m, err := r.c.Mapping(d.Ref.GroupVersionKind())
	if err != nil {
		rec.Outcome, rec.Error = Failed, kube.Message(err)
		return
	}
	obj := d.Obj
	if ch.Action == plan.Update && ch.LiveResourceVersion != "" {
		// Apply only onto the object the plan saw: if it moved since the
		// snapshot, the server answers 409 and the object is planned again.
		obj = d.Obj.DeepCopy()
		obj.SetResourceVersion(ch.LiveResourceVersion)
	}
	// Of the server's answer only snapply's managedFields entry is kept
	// (for the known test of the next plan): the after snapshot records
	// the applied state, once the wait is over.
	out, err := r.c.Apply(ctx, obj, m, kube.ApplyOptions{Force: force})
	if err != nil && apierrors.IsConflict(err) && obj != d.Obj {
		if _, isFieldConflict := kube.Conflicts(err); !isFieldConflict {
			rec.Replanned = true
			out, err = r.replan(ctx, d, m, force)
		}
	}
	if err != nil {
		rec.Outcome = Failed
		if conflicts, ok := kube.Conflicts(err); ok {
			rec.Error = conflictError(plan.Change{Conflicts: toPlanConflicts(conflicts)})
		} else {
			rec.Error = kube.Message(err)
		}
		return
	}
	rec.Outcome, rec.Fields = Applied, plan.AppliedFields(out)
}

// replan plans an object again that moved since the snapshot: a dry run
// against the object as it is now, then, unless that conflicts, the apply.
func (r *runner) replan(ctx context.Context, d object.Object, m *meta.RESTMapping, force bool) (*unstructured.Unstructured, error) {
	if _, _, err := r.c.DryRunApply(ctx, d.Obj, force); err != nil {
		return nil, err
	}
	return r.c.Apply(ctx, d.Obj, m, kube.ApplyOptions{Force: force})
}

// establishCRDs waits until the CRDs just applied are Established, then
// refreshes discovery, so that the custom resources of later waves map.
func (r *runner) establishCRDs(ctx context.Context, idx []int) {
	var crds []*Record
	for _, i := range idx {
		rec := &r.res.Records[i]
		if rec.Outcome == Applied && rec.Ref.Group == "apiextensions.k8s.io" && rec.Ref.Kind == "CustomResourceDefinition" {
			crds = append(crds, rec)
		}
	}
	if len(crds) == 0 {
		return
	}
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, rec := range crds {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, r.opts.CRDTimeout, true, func(ctx context.Context) (bool, error) {
			u, err := r.c.Dynamic.Resource(gvr).Get(ctx, rec.Ref.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			rec.Readiness, rec.ReadinessMessage = StatusInProgress, "not Established after "+r.opts.CRDTimeout.String()
		} else {
			rec.Readiness = StatusCurrent
		}
	}
	r.c.Mapper.Reset()
}

// prune deletes the plan's delete changes, namespaced objects first and
// Namespaces and CRDs last. After any failure of the apply waves nothing is
// pruned: a half-applied set must not also lose the objects it replaced.
func (r *runner) prune(ctx context.Context, idx []int) {
	failed := false
	for _, rec := range r.res.Records {
		if rec.Outcome == Failed || (rec.Outcome == NotAttempted && rec.Action != plan.Delete) {
			failed = true
		}
	}
	for _, i := range idx {
		rec := &r.res.Records[i]
		rec.Wave = "prune"
		switch {
		case !r.opts.Prune:
			rec.Outcome, rec.Error = NotAttempted, "prune is off (--prune=false)"
		case failed:
			rec.Outcome, rec.Error = NotAttempted, "not pruned: some objects were not applied"
		}
	}
	steps := make([][]int, 3)
	for _, i := range idx {
		if r.res.Records[i].Outcome == "" {
			o := PruneOrder(r.res.Records[i].Ref)
			steps[o] = append(steps[o], i)
		}
	}
	for _, step := range steps {
		r.wave(ctx, "prune", step, r.delete)
	}
}

// delete removes one inventory member, only if it is still the object the
// plan saw (same UID).
func (r *runner) delete(ctx context.Context, i int) {
	rec := &r.res.Records[i]
	rec.Started = time.Now()
	defer func() { rec.Duration = time.Since(rec.Started) }()
	m, err := r.c.Mapping(rec.Ref.GroupVersionKind())
	if err != nil {
		rec.Outcome, rec.Error = Failed, kube.Message(err)
		return
	}
	ri := r.c.Resource(m, rec.Ref.Namespace)
	live, err := ri.Get(ctx, rec.Ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		rec.Outcome = Pruned // already gone
		return
	}
	if err != nil {
		rec.Outcome, rec.Error = Failed, kube.Message(err)
		return
	}
	if _, ok := live.GetLabels()[PartOfLabel]; !ok {
		rec.Outcome, rec.Error = NotAttempted, "no longer carries the "+PartOfLabel+" label: left alone"
		return
	}
	uid := live.GetUID()
	policy := metav1.DeletePropagationBackground
	err = ri.Delete(ctx, rec.Ref.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &policy})
	if err != nil && !apierrors.IsNotFound(err) {
		rec.Outcome, rec.Error = Failed, kube.Message(err)
		return
	}
	rec.Outcome = Pruned
}

// wait waits for the applied objects to become ready and records each
// object's readiness.
func (r *runner) wait(ctx context.Context) {
	var refs []object.Ref
	var recs []*Record
	for i := range r.res.Records {
		rec := &r.res.Records[i]
		if rec.Outcome == Applied && rec.Readiness == "" {
			refs = append(refs, rec.Ref)
			recs = append(recs, rec)
		}
	}
	if len(refs) == 0 {
		return
	}
	ready, _ := Wait(ctx, r.c, refs, r.opts.WaitOptions)
	for i, rd := range ready {
		recs[i].Readiness, recs[i].ReadinessMessage = rd.Status, rd.Message
	}
}

func conflictError(ch plan.Change) string {
	msg := "conflict:"
	for i, fc := range ch.Conflicts {
		if i > 0 {
			msg += ","
		}
		msg += fmt.Sprintf(" %s owned by %s", fc.Field, fc.Manager)
	}
	return msg + "; " + plan.ConflictHelp
}

func toPlanConflicts(cs []kube.Conflict) []plan.FieldConflict {
	out := make([]plan.FieldConflict, len(cs))
	for i, c := range cs {
		out[i] = plan.FieldConflict{Field: c.Field, Manager: c.Manager}
	}
	return out
}
