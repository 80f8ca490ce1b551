package apply

import (
	"time"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/store"
)

// Outcome is what happened to one object during an apply.
type Outcome string

// The outcomes. The strings are part of the JSON contract of apply results.
const (
	// Applied: created or updated by server-side apply.
	Applied Outcome = "applied"
	// Unchanged: the plan had nothing to do; nothing was written.
	Unchanged Outcome = "unchanged"
	// Pruned: deleted because it left git.
	Pruned Outcome = "pruned"
	// Failed: the write was attempted and the server refused it.
	Failed Outcome = "failed"
	// NotAttempted: not written, because of the plan (conflict, invalid),
	// an earlier failure (prune after a failed apply), or an interrupt.
	NotAttempted Outcome = "not-attempted"
)

// Record is the outcome of one object.
type Record struct {
	// Ref names the object.
	Ref object.Ref `json:"ref"`
	// Source is where the desired object came from; empty for prunes.
	Source object.Source `json:"source"`
	// Action is what the plan said to do.
	Action plan.Action `json:"action"`
	// Outcome is what happened.
	Outcome Outcome `json:"outcome"`
	// Error says why a write failed or was not attempted.
	Error string `json:"error,omitempty"`
	// Wave is the wave the object was applied in ("prune" for deletes).
	Wave string `json:"wave"`
	// Readiness is the object's status after the wait, when waited for.
	Readiness Status `json:"readiness,omitempty"`
	// ReadinessMessage is kstatus's message for the readiness.
	ReadinessMessage string `json:"readinessMessage,omitempty"`
	// Replanned is set when the object had changed since the snapshot and
	// was planned again before it was applied.
	Replanned bool `json:"replanned,omitempty"`
	// Started is when the write started; Duration how long it took.
	Started  time.Time     `json:"started,omitzero"`
	Duration time.Duration `json:"duration"`
	// Fields is plan.AppliedFields of the object as the apply left it: of
	// the server's answer, or for an unchanged object the plan's
	// Change.Fields; empty otherwise.
	Fields string `json:"-"`
}

// Summary counts the records by outcome.
type Summary struct {
	Applied      int `json:"applied"`
	Unchanged    int `json:"unchanged"`
	Pruned       int `json:"pruned"`
	Failed       int `json:"failed"`
	NotAttempted int `json:"notAttempted"`
	// NotReady counts the applied objects that did not become Current.
	NotReady int `json:"notReady"`
}

// Result is the outcome of an apply.
type Result struct {
	// Plan is the plan that was applied.
	Plan *plan.Plan `json:"plan"`
	// Summary counts the records.
	Summary Summary `json:"summary"`
	// Records holds one record per object of the plan, in plan order.
	Records []Record `json:"records"`
	// Interrupted is set when the apply stopped early (SIGINT, lost lock).
	Interrupted bool `json:"interrupted,omitempty"`
	// Duration is how long the apply took.
	Duration time.Duration `json:"duration"`
}

// OK reports whether every object reached its planned state.
func (r *Result) OK() bool {
	return !r.Interrupted && r.Summary.Failed == 0 && r.Summary.NotAttempted == 0 && r.Summary.NotReady == 0
}

func (r *Result) summarize() {
	var s Summary
	for _, rec := range r.Records {
		switch rec.Outcome {
		case Applied:
			s.Applied++
			if rec.Readiness != "" && rec.Readiness != StatusCurrent {
				s.NotReady++
			}
		case Unchanged:
			s.Unchanged++
		case Pruned:
			s.Pruned++
		case Failed:
			s.Failed++
		case NotAttempted:
			s.NotAttempted++
		}
	}
	r.Summary = s
}

// StoreRecord returns the part of r that the store keeps for a run; the
// store fills in the object IDs before and after.
func (r Record) StoreRecord() store.Record {
	return store.Record{
		Ref: r.Ref, Action: string(r.Action), Outcome: string(r.Outcome), Error: r.Error,
		Readiness: string(r.Readiness), Started: r.Started, Duration: r.Duration,
		Fields: r.Fields,
	}
}
