// Package engine runs snapply's pipeline: render -> lock -> snapshot ->
// plan -> apply -> prune -> wait -> record. It owns the order of a run, the
// prune set, and the inventory's record of the last apply; it reports
// progress through Engine.Progress and never prints.
//
// A run is two calls: Plan or PrepareApply (steps 1 and 2: the desired set,
// the live snapshot written to the store, the plan), then, for an apply,
// Prepared.Deploy (steps 3 and 4: waves, prune, wait, record). The command
// layer (package cli) and the GitHub Action (package action) build an Engine
// and render what it returns.
package engine

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/snapshot"
	"github.com/snapply/snapply/internal/store"
)

// Engine runs the pipeline against one cluster, for one source (commit,
// run, pull request).
type Engine struct {
	// NewClient builds the cluster client. It is called after rendering,
	// so that a manifest error is reported before an unreachable server.
	NewClient func() (*kube.Client, error)
	// Source says where the run comes from; it is recorded with every
	// snapshot and on the inventory.
	Source store.Source
	// Holder names this run to others waiting on the inventory's lock.
	// Empty means apply.DefaultHolder.
	Holder string
	// Getenv reads the environment (the store key); nil means os.Getenv.
	Getenv func(string) string
	// Progress, when set, is told about each step. It may be called from
	// several goroutines, one call at a time.
	Progress func(Event)
	// Records, when set, is asked for the record of the last apply of inv
	// when the run's own store does not hold it (a CI job that does not
	// have the store of the job that applied): it returns the path of a
	// store file that does and a line saying where it comes from, or ""
	// and a line saying why there is none (then every object is dry-run).
	// The engine reports the line as progress.
	Records func(ctx context.Context, inv *apply.Inventory) (path, line string)

	progressMu sync.Mutex
}

// Stage names a step of the pipeline, for progress.
type Stage string

// The stages of a run, in order.
const (
	StageRender   Stage = "render"
	StageLock     Stage = "lock"
	StageSnapshot Stage = "snapshot"
	StagePlan     Stage = "plan"
	StageApply    Stage = "apply"
	StageWait     Stage = "wait"
	StageRecord   Stage = "record"
)

// Event is one step of a run, for progress output.
type Event struct {
	// Stage is the step the event belongs to.
	Stage Stage
	// Message says what happened, in one line for people.
	Message string
	// LockWaiting is set when the lock is held by another and the run
	// starts to wait for it; Message names the holder.
	LockWaiting bool
	// Apply is set for the progress of an apply wave (StageApply).
	Apply *apply.Event
	// Ready and Total count the objects ready so far (StageWait); Pending
	// is the first of those not ready yet.
	Ready, Total int
	Pending      []apply.Readiness
}

// Target is what a run makes the cluster match: the rendered Path, or, for
// a rollback, a desired set restored from the store.
type Target struct {
	// Path is rendered when Desired is nil; it names the source in reports.
	Path string
	// Desired, when not nil, is the desired set: Path is not rendered.
	Desired []object.Object
	// Restores is the ID of the snapshot a rollback restores; it is
	// recorded in the source of the run's snapshots.
	Restores string
	// Keep lists inventory members that are not desired and must not be
	// pruned either (a Secret whose values a rollback cannot restore).
	Keep map[object.Key]bool
	// OnRender, when set, sees the desired objects before anything else
	// happens (the action masks their Secret values in the log).
	OnRender func([]object.Object)
}

// Options are the settings shared by plan and apply.
type Options struct {
	// StorePath is the store file: created if missing, appended to.
	StorePath string
	// Scope is the snapshot scope: managed, namespaces or cluster.
	Scope string
	// Concurrency bounds the requests in flight; 0 means the default.
	Concurrency int
	// AllowEmpty accepts a target with no object.
	AllowEmpty bool
	// ForceConflicts takes fields other managers own, on every object.
	ForceConflicts bool
	// Revalidate dry-runs every object, also those the record of the last
	// apply shows to be unchanged (see docs/design.md, "Known objects").
	Revalidate bool
	// Name and InventoryNamespace name the inventory (ApplySet parent).
	Name               string
	InventoryNamespace string
	// StoreKey says where the store key comes from (default: the
	// variable SNAPPLY_STORE_KEY).
	StoreKey StoreKey
	// PolicyDir, when set, is a directory of Rego policies (package
	// policy) evaluated on every planned object; a deny stops Deploy.
	PolicyDir string
}

// DefaultOptions returns the defaults of `snapply plan` and `snapply apply`.
func DefaultOptions() Options {
	return Options{
		StorePath:          store.DefaultPath,
		Scope:              string(snapshot.ScopeNamespaces),
		Concurrency:        16,
		Name:               "snapply",
		InventoryNamespace: "default",
	}
}

// progress tells Progress about ev, one call at a time: the snapshot, the
// planner and the waves report from goroutines of their own.
func (e *Engine) progress(ev Event) {
	if e.Progress != nil {
		e.progressMu.Lock()
		defer e.progressMu.Unlock()
		e.Progress(ev)
	}
}

func (e *Engine) progressf(stage Stage, format string, args ...any) {
	if e.Progress != nil {
		e.progress(Event{Stage: stage, Message: fmt.Sprintf(format, args...)})
	}
}

func (e *Engine) getenv(k string) string {
	if e.Getenv != nil {
		return e.Getenv(k)
	}
	return os.Getenv(k)
}

func (e *Engine) holder() string {
	if e.Holder != "" {
		return e.Holder
	}
	return apply.DefaultHolder(e.getenv)
}

func since(t time.Time) time.Duration {
	return time.Since(t).Round(time.Millisecond)
}
