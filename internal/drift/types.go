package drift

import "github.com/snapply/snapply/internal/object"

// State is how one object compares with git. The strings are part of the
// JSON contract.
type State string

// The states of an object in a drift report.
const (
	// InSync: every field git sets has its git value live, and snapply
	// still owns them.
	InSync State = "in-sync"
	// Drifted: fields git sets have other values live, or another field
	// manager took them from snapply with a force-apply.
	Drifted State = "drifted"
	// Missing: in git, not in the cluster (deleted out of band).
	Missing State = "missing"
	// Extra: a member of the inventory that is no longer in git; the next
	// apply prunes it.
	Extra State = "extra"
	// Orphan: an object of a managed namespace that belongs to no
	// inventory and that nothing owns (reported with --orphans only).
	Orphan State = "orphan"
	// Invalid: the API server refuses the git object; its drift is unknown.
	Invalid State = "invalid"
)

// States lists the states in the order reports show them.
var States = []State{Drifted, Missing, Extra, Orphan, Invalid, InSync}

// Report is the outcome of a drift check, and its JSON contract: every
// key is always present and lists are [] rather than null.
type Report struct {
	// Snapshot is the ID of the store snapshot of the live state the
	// report was computed against.
	Snapshot string `json:"snapshot"`
	// Inventory names the inventory: "<namespace>/<name>".
	Inventory string `json:"inventory"`
	// Summary counts the objects by state.
	Summary Summary `json:"summary"`
	// Objects lists every object that is not in sync, sorted by Ref.
	Objects []Object `json:"objects"`
}

// Summary counts the objects of a report by state.
type Summary struct {
	InSync  int `json:"inSync"`
	Drifted int `json:"drifted"`
	Missing int `json:"missing"`
	Extra   int `json:"extra"`
	Orphan  int `json:"orphan"`
	Invalid int `json:"invalid"`
}

// Count returns the number of objects in state st.
func (s Summary) Count(st State) int {
	if n := s.counter(st); n != nil {
		return *n
	}
	return 0
}

func (s *Summary) add(st State) {
	if n := s.counter(st); n != nil {
		*n++
	}
}

// counter returns the field that counts state st, nil for an unknown one.
func (s *Summary) counter(st State) *int {
	switch st {
	case InSync:
		return &s.InSync
	case Drifted:
		return &s.Drifted
	case Missing:
		return &s.Missing
	case Extra:
		return &s.Extra
	case Orphan:
		return &s.Orphan
	case Invalid:
		return &s.Invalid
	}
	return nil
}

// Drifts counts the objects that are not as git says: drifted, missing,
// extra and orphans (invalid ones are errors, not drift).
func (s Summary) Drifts() int { return s.Drifted + s.Missing + s.Extra + s.Orphan }

// HasDrift reports whether the cluster differs from git.
func (r *Report) HasDrift() bool { return r.Summary.Drifts() > 0 }

// Object is one object that is not in sync with git.
type Object struct {
	// Ref names the object.
	Ref object.Ref `json:"ref"`
	// State says how it differs.
	State State `json:"state"`
	// Source is where the git object comes from; empty for extra objects
	// and orphans.
	Source Source `json:"source"`
	// Fields are the fields git sets whose live value differs, each with
	// the field manager that owns the live value and when it wrote it.
	Fields []Field `json:"fields"`
	// Ownership lists the fields git sets that another manager took from
	// snapply with a force-apply (an Apply with force), whatever their value.
	Ownership []Ownership `json:"ownership"`
	// Diff is a unified diff of the live object (---) and the object once
	// git is applied again (+++): what a re-apply changes. Secret values
	// are redacted.
	Diff string `json:"diff"`
	// Adopt is the patch that puts the live values of Fields into git: a
	// strategic-merge patch in YAML (apiVersion, kind, name, namespace and
	// each drifted field with its live value; null for a field live does
	// not set), to paste into the manifest or a kustomize patch. Empty
	// unless the object drifted in value. Secret values stay redacted.
	Adopt string `json:"adopt"`
	// Message says what to do, in one line.
	Message string `json:"message"`
}

// Field is one field whose live value differs from git.
type Field struct {
	// Path is the field, like "spec.replicas" or
	// `spec.template.spec.containers[name=web].image`.
	Path string `json:"path"`
	// Git and Live are the values, as compact JSON ("(absent)" when the
	// field is not set), cut at 120 characters.
	Git  string `json:"git"`
	Live string `json:"live"`
	// Manager, Operation and Time name the managedFields entry that owns
	// the live value; empty when no manager owns it (it was removed).
	Manager   string `json:"manager"`
	Operation string `json:"operation"`
	Time      string `json:"time"`
}

// Ownership is one field another field manager took with a force-apply.
type Ownership struct {
	Path      string `json:"path"`
	Manager   string `json:"manager"`
	Operation string `json:"operation"`
	Time      string `json:"time"`
}

// Source is where a git object comes from, as in the plan's JSON: both
// keys always present.
type Source struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// String prints "file:line", or "file" when the line is unknown.
func (s Source) String() string { return object.Source{File: s.File, Line: s.Line}.String() }
