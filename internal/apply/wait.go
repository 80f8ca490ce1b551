package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
)

// Status is the readiness of one object after apply, as kstatus computes it.
// The strings are kstatus's.
type Status string

// The statuses.
const (
	// StatusCurrent: the object is ready (kstatus Current). Objects without
	// status conventions (ConfigMaps, RBAC...) are Current as soon as they
	// exist.
	StatusCurrent = Status(kstatus.CurrentStatus)
	// StatusInProgress: the object is being reconciled (a rollout under
	// way, a generation not yet observed).
	StatusInProgress = Status(kstatus.InProgressStatus)
	// StatusFailed: the object will not become ready without a change (a
	// Deployment past its progress deadline, a Stalled condition).
	StatusFailed = Status(kstatus.FailedStatus)
	// StatusTerminating: the object is being deleted.
	StatusTerminating = Status(kstatus.TerminatingStatus)
	// StatusNotFound: the object does not exist.
	StatusNotFound = Status(kstatus.NotFoundStatus)
	// StatusUnknown: the object could not be read, or its status could not
	// be computed; the message says why.
	StatusUnknown = Status(kstatus.UnknownStatus)
)

// Readiness is the readiness of one object after apply.
type Readiness struct {
	// Ref names the object.
	Ref object.Ref `json:"ref"`
	// Status is the last status read.
	Status Status `json:"status"`
	// Message is kstatus's message for the status ("Replicas: 1/2"), or
	// why the object could not be read.
	Message string `json:"message,omitempty"`
	// Elapsed is how long after the start of the wait the object became
	// Current or Failed, or was given up on; for an object still pending
	// when the wait stopped, the length of the wait.
	Elapsed time.Duration `json:"elapsed"`
}

// String prints "deployment.apps/web -n prod (InProgress: Replicas: 1/2)".
func (r Readiness) String() string {
	if r.Message == "" {
		return fmt.Sprintf("%s (%s)", r.Ref, r.Status)
	}
	return fmt.Sprintf("%s (%s: %s)", r.Ref, r.Status, r.Message)
}

// WaitOptions controls Wait. Zero fields other than Timeout and Progress
// take their values from DefaultWaitOptions.
type WaitOptions struct {
	// Timeout bounds the whole wait; zero or less means only ctx bounds it.
	Timeout time.Duration
	// Interval is the pause between two poll rounds; it grows by half after
	// each round, up to twice its value.
	Interval time.Duration
	// Concurrency bounds the requests in flight during a round.
	Concurrency int
	// NotFoundGrace is how long an object may be missing before it stops
	// being polled and counts as failed.
	NotFoundGrace time.Duration
	// Progress, when set, is called after each poll round with the number
	// of Current objects, the total, and the objects still waited for (in
	// input order; Failed objects are in neither). It is called from the
	// goroutine that called Wait; the command layer prints.
	Progress func(ready, total int, pending []Readiness)
}

// DefaultWaitOptions returns the options `snapply apply` waits with.
func DefaultWaitOptions() WaitOptions {
	return WaitOptions{
		Timeout:       5 * time.Minute,
		Interval:      time.Second,
		Concurrency:   16,
		NotFoundGrace: 5 * time.Second,
	}
}

func (o WaitOptions) withDefaults() WaitOptions {
	d := DefaultWaitOptions()
	if o.Interval <= 0 {
		o.Interval = d.Interval
	}
	if o.Concurrency <= 0 {
		o.Concurrency = d.Concurrency
	}
	if o.NotFoundGrace <= 0 {
		o.NotFoundGrace = d.NotFoundGrace
	}
	return o
}

// WaitError says which objects did not become ready. Wait returns it when
// it timed out, was cancelled with objects still pending, or when an object
// failed.
type WaitError struct {
	// Total is the number of objects waited for.
	Total int
	// Timeout is set when the wait timed out (WaitOptions.Timeout).
	Timeout time.Duration
	// Cause is why the wait stopped early: context.DeadlineExceeded on a
	// timeout, ctx's error on a cancellation; nil otherwise.
	Cause error
	// NotReady lists the objects still pending when the wait stopped.
	NotReady []Readiness
	// Failed lists the objects that are Failed, or NotFound after the
	// grace period.
	Failed []Readiness
}

// waitMaxListed bounds the objects an error message names.
const waitMaxListed = 10

// Error implements error.
func (e *WaitError) Error() string {
	var parts []string
	if len(e.NotReady) > 0 {
		switch {
		case e.Timeout > 0:
			parts = append(parts, fmt.Sprintf("timed out after %s waiting for %d of %d objects: %s",
				e.Timeout, len(e.NotReady), e.Total, waitListed(e.NotReady)))
		case e.Cause != nil:
			parts = append(parts, fmt.Sprintf("stopped waiting for %d of %d objects (%v): %s",
				len(e.NotReady), e.Total, e.Cause, waitListed(e.NotReady)))
		default:
			parts = append(parts, fmt.Sprintf("%d of %d objects not ready: %s",
				len(e.NotReady), e.Total, waitListed(e.NotReady)))
		}
	}
	if len(e.Failed) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d objects failed: %s",
			len(e.Failed), e.Total, waitListed(e.Failed)))
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns Cause.
func (e *WaitError) Unwrap() error { return e.Cause }

func waitListed(rs []Readiness) string {
	var b strings.Builder
	for i, r := range rs {
		if i == waitMaxListed {
			fmt.Fprintf(&b, ", and %d more", len(rs)-waitMaxListed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.String())
	}
	return b.String()
}

// errWaitTimeout is the cause of the wait's own deadline.
var errWaitTimeout = errors.New("wait timeout")

// Wait polls every object until kstatus says it is Current or Failed, or
// until the timeout passes or ctx is done. An object that is NotFound for
// longer than opts.NotFoundGrace also stops being polled. Objects without
// status conventions are Current at once, so they finish in the first
// round.
//
// Wait returns one Readiness per ref, in input order, always: an object not
// yet ready keeps the last status and message read. The error is a
// *WaitError when the wait timed out or was cancelled with objects pending,
// or when an object failed (Failed, or NotFound after the grace period).
//
// Each round reads every pending object once. The pending objects of one
// resource type in one namespace are read with one paginated LIST when
// there are at least 3 of them (waitListMin), and with a GET each otherwise:
// after an apply of many ConfigMaps or Deployments into a namespace, a LIST
// per type costs a handful of requests where GETs would cost one per object
// (the snapshot already lists the same types in the same namespaces). When
// the LIST is forbidden, that type and namespace falls back to GETs. The
// requests of a round run opts.Concurrency at a time.
func Wait(ctx context.Context, c *kube.Client, refs []object.Ref, opts WaitOptions) ([]Readiness, error) {
	opts = opts.withDefaults()
	start := time.Now()
	w := &waitPoller{
		c:        c,
		opts:     opts,
		start:    start,
		states:   make([]waitState, len(refs)),
		mappings: map[schema.GroupVersionKind]*meta.RESTMapping{},
		noList:   map[waitGroupKey]bool{},
	}
	for i, ref := range refs {
		w.states[i].r = Readiness{Ref: ref, Status: StatusUnknown, Message: "not read yet"}
	}

	pctx, cancel := ctx, context.CancelFunc(func() {})
	if opts.Timeout > 0 {
		pctx, cancel = context.WithTimeoutCause(ctx, opts.Timeout, errWaitTimeout)
	}
	defer cancel()

	delay := opts.Interval
	for w.pending() > 0 && pctx.Err() == nil {
		w.round(pctx)
		if opts.Progress != nil {
			opts.Progress(w.report())
		}
		if w.pending() == 0 || pctx.Err() != nil {
			break
		}
		t := time.NewTimer(delay)
		select {
		case <-pctx.Done():
			t.Stop()
		case <-t.C:
		}
		delay = min(delay*3/2, 2*opts.Interval)
	}
	return w.result(ctx, pctx)
}

// waitListMin is the number of pending objects of one resource type in one
// namespace from which a round LISTs them rather than GETs each.
const waitListMin = 3

// waitListPage is the page size of a LIST.
const waitListPage = 500

// waitState is what Wait knows about one object.
type waitState struct {
	r Readiness
	// done is set when the object is no longer polled.
	done bool
	// missingSince is when the object was first seen missing, in the
	// current run of NotFound answers.
	missingSince time.Time
}

// waitGroupKey is a resource type in a namespace ("" for cluster-scoped).
type waitGroupKey struct {
	resource  schema.GroupVersionResource
	namespace string
}

// waitJob is one request of a round: a LIST of a group, or a GET of one
// object (idx has one element).
type waitJob struct {
	list bool
	key  waitGroupKey
	m    *meta.RESTMapping
	idx  []int

	// Results.
	objs []*unstructured.Unstructured // per idx; nil when missing
	err  error
}

type waitPoller struct {
	c        *kube.Client
	opts     WaitOptions
	start    time.Time
	states   []waitState
	mappings map[schema.GroupVersionKind]*meta.RESTMapping
	noList   map[waitGroupKey]bool
}

func (w *waitPoller) pending() int {
	n := 0
	for i := range w.states {
		if !w.states[i].done {
			n++
		}
	}
	return n
}

// report returns Progress's arguments.
func (w *waitPoller) report() (ready, total int, pending []Readiness) {
	for _, s := range w.states {
		switch {
		case s.r.Status == StatusCurrent:
			ready++
		case !s.done:
			pending = append(pending, s.r)
		}
	}
	return ready, len(w.states), pending
}

// round reads every pending object once and updates its state.
func (w *waitPoller) round(ctx context.Context) {
	groups := map[waitGroupKey][]int{}
	var order []waitGroupKey
	maps := map[waitGroupKey]*meta.RESTMapping{}
	unmapped := map[schema.GroupVersionKind]error{} // look each up once a round
	for i := range w.states {
		s := &w.states[i]
		if s.done {
			continue
		}
		gvk := s.r.Ref.GroupVersionKind()
		err, failed := unmapped[gvk]
		var m *meta.RESTMapping
		if !failed {
			m, err = w.mapping(gvk)
		}
		if err != nil {
			unmapped[gvk] = err
			s.r.Status, s.r.Message = StatusUnknown, err.Error()
			continue
		}
		key := waitGroupKey{resource: m.Resource}
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			key.namespace = s.r.Ref.Namespace
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
			maps[key] = m
		}
		groups[key] = append(groups[key], i)
	}

	var jobs []*waitJob
	for _, key := range order {
		idx := groups[key]
		if len(idx) >= waitListMin && !w.noList[key] {
			jobs = append(jobs, &waitJob{list: true, key: key, m: maps[key], idx: idx})
			continue
		}
		for _, i := range idx {
			jobs = append(jobs, &waitJob{key: key, m: maps[key], idx: []int{i}})
		}
	}
	w.run(ctx, jobs)

	// A forbidden LIST falls back to GETs, now and in later rounds.
	var retry []*waitJob
	for _, j := range jobs {
		if j.list && apierrors.IsForbidden(j.err) {
			w.noList[j.key] = true
			for _, i := range j.idx {
				retry = append(retry, &waitJob{key: j.key, m: j.m, idx: []int{i}})
			}
		}
	}
	w.run(ctx, retry)

	now := time.Now()
	for _, j := range append(jobs, retry...) {
		if j.list && apierrors.IsForbidden(j.err) {
			continue // replaced by the retries
		}
		w.update(ctx, j, now)
	}
}

// mapping returns the REST mapping of gvk, cached for the whole wait.
func (w *waitPoller) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if m, ok := w.mappings[gvk]; ok {
		return m, nil
	}
	m, err := w.c.Mapping(gvk)
	if err != nil {
		return nil, err
	}
	w.mappings[gvk] = m
	return m, nil
}

// run runs the jobs, opts.Concurrency at a time.
func (w *waitPoller) run(ctx context.Context, jobs []*waitJob) {
	ch := make(chan *waitJob)
	var wg sync.WaitGroup
	for range min(w.opts.Concurrency, len(jobs)) {
		wg.Go(func() {
			for j := range ch {
				w.do(ctx, j)
			}
		})
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
}

// do makes the request of one job and stores its result in it.
func (w *waitPoller) do(ctx context.Context, j *waitJob) {
	ri := w.c.Resource(j.m, j.key.namespace)
	j.objs = make([]*unstructured.Unstructured, len(j.idx))
	if !j.list {
		name := w.states[j.idx[0]].r.Ref.Name
		obj, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		j.objs[0], j.err = obj, err
		return
	}
	at := make(map[string]int, len(j.idx))
	for k, i := range j.idx {
		at[w.states[i].r.Ref.Name] = k
	}
	lo := metav1.ListOptions{Limit: waitListPage}
	for {
		l, err := ri.List(ctx, lo)
		if err != nil {
			j.err = err
			return
		}
		for n := range l.Items {
			item := &l.Items[n]
			if k, ok := at[item.GetName()]; ok {
				if item.GetKind() == "" {
					item.SetGroupVersionKind(j.m.GroupVersionKind)
				}
				j.objs[k] = item
			}
		}
		if lo.Continue = l.GetContinue(); lo.Continue == "" {
			return
		}
	}
}

// update records the result of a job in the states of its objects.
func (w *waitPoller) update(ctx context.Context, j *waitJob, now time.Time) {
	if j.err != nil {
		if ctx.Err() != nil {
			return // cut short by the timeout or ctx: keep the last status
		}
		msg := kube.Message(kube.Unreachable(w.c.Config.Host, j.err))
		for _, i := range j.idx {
			s := &w.states[i]
			s.r.Status, s.r.Message = StatusUnknown, msg
		}
		return
	}
	for k, i := range j.idx {
		s := &w.states[i]
		obj := j.objs[k]
		if obj == nil {
			if s.missingSince.IsZero() {
				s.missingSince = now
			}
			s.r.Status, s.r.Message = StatusNotFound, "not found"
			if now.Sub(s.missingSince) >= w.opts.NotFoundGrace {
				w.finish(s, now)
			}
			continue
		}
		s.missingSince = time.Time{}
		res, err := kstatus.Compute(obj)
		if err != nil {
			s.r.Status, s.r.Message = StatusUnknown, err.Error()
			continue
		}
		s.r.Status, s.r.Message = Status(res.Status), res.Message
		if s.r.Status == StatusCurrent || s.r.Status == StatusFailed {
			w.finish(s, now)
		}
	}
}

func (w *waitPoller) finish(s *waitState, now time.Time) {
	s.done = true
	s.r.Elapsed = now.Sub(w.start)
}

// result returns the readiness of every object and the error Wait returns.
// ctx is Wait's context, pctx the one bounded by the timeout.
func (w *waitPoller) result(ctx, pctx context.Context) ([]Readiness, error) {
	now := time.Now()
	out := make([]Readiness, len(w.states))
	e := &WaitError{Total: len(w.states)}
	for i := range w.states {
		s := &w.states[i]
		if !s.done {
			s.r.Elapsed = now.Sub(w.start)
			e.NotReady = append(e.NotReady, s.r)
		} else if s.r.Status != StatusCurrent {
			e.Failed = append(e.Failed, s.r)
		}
		out[i] = s.r
	}
	if len(e.NotReady) > 0 {
		switch {
		case ctx.Err() != nil:
			e.Cause = ctx.Err()
		case context.Cause(pctx) == errWaitTimeout:
			e.Timeout, e.Cause = w.opts.Timeout, context.DeadlineExceeded
		}
	}
	if len(e.NotReady) == 0 && len(e.Failed) == 0 {
		return out, nil
	}
	return out, e
}
