package plan

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/object"
)

// Action is what applying a plan does to one object.
type Action string

// The actions of a plan. The strings are part of the JSON contract.
const (
	// Create: the object is not live.
	Create Action = "create"
	// Update: the live object differs from the server-side-apply dry-run result.
	Update Action = "update"
	// Unchanged: applying would change nothing.
	Unchanged Action = "unchanged"
	// Delete: an inventory member that is no longer desired (prune).
	Delete Action = "delete"
	// Conflict: applying without force would overwrite fields another
	// field manager owns.
	Conflict Action = "conflict"
	// Invalid: the API server refused the object (schema, unknown field,
	// immutable field, unknown kind).
	Invalid Action = "invalid"
	// Pending: a custom resource whose CRD, or a namespaced object whose
	// Namespace, the same plan creates; planned as create, but the server
	// could not validate it yet.
	Pending Action = "pending"
)

// Actions lists every action in the order reports show them.
var Actions = []Action{Create, Update, Delete, Conflict, Invalid, Pending, Unchanged}

// IsChange reports whether the action changes the cluster when applied.
func (a Action) IsChange() bool {
	return a == Create || a == Update || a == Delete || a == Pending
}

// IsError reports whether the action stops an apply: conflicts and invalid
// objects.
func (a Action) IsError() bool { return a == Conflict || a == Invalid }

// Plan is what applying the desired set to the cluster would do. It is data:
// package report renders it.
type Plan struct {
	// Snapshot is the ID of the store snapshot of the live state the plan
	// was computed against.
	Snapshot string `json:"snapshot"`
	// Summary counts the changes by action.
	Summary Summary `json:"summary"`
	// Changes holds one entry per desired object (unchanged ones included)
	// and one per object to delete, sorted by Ref.
	Changes []Change `json:"changes"`
	// Images is the image inventory: every container of every workload
	// of the plan, before and after (see Analyze).
	Images []ImageUse `json:"images,omitempty"`
}

// Summary counts the changes of a plan by action.
type Summary struct {
	Create    int `json:"create"`
	Update    int `json:"update"`
	Unchanged int `json:"unchanged"`
	Delete    int `json:"delete"`
	Conflict  int `json:"conflict"`
	Invalid   int `json:"invalid"`
	Pending   int `json:"pending"`
}

// Count returns the number of changes with action a.
func (s Summary) Count(a Action) int {
	if n := s.counter(a); n != nil {
		return *n
	}
	return 0
}

// add counts one change with action a.
func (s *Summary) add(a Action) {
	if n := s.counter(a); n != nil {
		*n++
	}
}

// counter returns the field that counts action a, nil for an unknown one.
func (s *Summary) counter(a Action) *int {
	switch a {
	case Create:
		return &s.Create
	case Update:
		return &s.Update
	case Unchanged:
		return &s.Unchanged
	case Delete:
		return &s.Delete
	case Conflict:
		return &s.Conflict
	case Invalid:
		return &s.Invalid
	case Pending:
		return &s.Pending
	}
	return nil
}

// Summarize counts changes by action.
func Summarize(changes []Change) Summary {
	var s Summary
	for _, c := range changes {
		s.add(c.Action)
	}
	return s
}

// HasChanges reports whether applying the plan would change the cluster.
func (p *Plan) HasChanges() bool {
	for _, c := range p.Changes {
		if c.Action.IsChange() {
			return true
		}
	}
	return false
}

// HasErrors reports whether the plan holds conflicts or invalid objects.
func (p *Plan) HasErrors() bool {
	return p.Summary.Conflict > 0 || p.Summary.Invalid > 0
}

// Change is the planned action for one object.
type Change struct {
	// Ref names the object.
	Ref object.Ref `json:"ref"`
	// Action is what applying does to it.
	Action Action `json:"action"`
	// Source is where the desired object came from; empty for deletes.
	Source object.Source `json:"source"`
	// Diff is a unified diff of the YAML of the live object (---) and the
	// object after apply (+++), with server-managed fields stripped and
	// Secret values redacted. Empty for unchanged objects.
	Diff string `json:"diff,omitempty"`
	// Conflicts lists, for a conflict, each field and the manager owning it.
	Conflicts []FieldConflict `json:"conflicts,omitempty"`
	// Message explains the action in one line: the server's error for an
	// invalid object, why an object is pending, the ways out of a conflict.
	Message string `json:"message,omitempty"`
	// Images lists the container images that change.
	Images []ImageChange `json:"images,omitempty"`
	// Warnings are the API server's warnings (deprecated versions, ...).
	Warnings []string `json:"warnings,omitempty"`
	// Destructive marks a delete of a Namespace or a CustomResourceDefinition,
	// which takes everything inside it along.
	Destructive bool `json:"destructive,omitempty"`
	// LiveResourceVersion is the resourceVersion of the live object the plan
	// read; empty when the object is not live.
	LiveResourceVersion string `json:"liveResourceVersion,omitempty"`
	// Fields lists, for an update, each field that changes, list items
	// matched by key (see Analyze).
	Fields []FieldDiff `json:"fields,omitempty"`
	// Risks flags what a reviewer should look at (see Analyze).
	Risks []Risk `json:"risks,omitempty"`

	// Before is the live object the plan compared with (nil when it is not
	// live) and After the object as the dry run says an update leaves it
	// (the live object when unchanged; the desired object for a create,
	// a pending or an invalid object, or a conflict; nil for a delete), so
	// that a plan keeps no more copies than it must. Neither is redacted
	// nor ever encoded: Analyze reads them.
	Before *unstructured.Unstructured `json:"-"`
	After  *unstructured.Unstructured `json:"-"`
	// Policy holds the verdicts of the policies (--policy) and of the
	// cluster's admission chain on the object; see PolicyResult.
	Policy []PolicyResult `json:"policy,omitempty"`
	// Verified says how the action was found: by a dry run, or from the
	// record of the last apply (a known object). Empty when neither could
	// check it: deletes, pending objects, kinds the server does not serve.
	Verified Verification `json:"verified,omitempty"`
	// Applied is AppliedFields of the object as applying it leaves it, for
	// an unchanged object (the dry run's answer, or the record's); apply
	// records it, and the next plan compares it with the live object.
	Applied string `json:"-"`
}

// FieldConflict is one field that another field manager owns.
type FieldConflict struct {
	// Field is the path of the field, like ".spec.replicas".
	Field string `json:"field"`
	// Manager is the field manager that owns it, like "kubectl-edit".
	Manager string `json:"manager"`
}

// ImageChange is a container image that an update changes, or that a create
// introduces (Old is empty) or a delete removes (New is empty).
type ImageChange struct {
	// Container is the container name, prefixed "init:" for init containers.
	Container string `json:"container"`
	Old       string `json:"old,omitempty"`
	New       string `json:"new,omitempty"`
}

// ForgetObjects drops the objects the changes hold for Analyze (Before and
// After), so that their memory can be reclaimed once the plan is analysed.
func (p *Plan) ForgetObjects() {
	for i := range p.Changes {
		p.Changes[i].Before, p.Changes[i].After = nil, nil
	}
}
