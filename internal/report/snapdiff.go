package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/snapply/snapply/internal/object"
)

// LiveTarget is what a SnapshotDiff's To says for a diff against the
// cluster (snapply diff --live).
const LiveTarget = "live"

// The kinds of change of one object in a SnapshotDiff.
const (
	ChangeAdded   = "added"
	ChangeRemoved = "removed"
	ChangeChanged = "changed"
)

// SnapshotDiff is the outcome of `snapply diff` and its JSON contract: every key is
// always present and lists are [] rather than null.
type SnapshotDiff struct {
	From    string              `json:"from"`
	To      string              `json:"to"`
	Summary SnapshotDiffSummary `json:"summary"`
	Changes []ObjectChange      `json:"changes"`
}

// SnapshotDiffSummary counts the objects by kind of change.
type SnapshotDiffSummary struct {
	Added     int `json:"added"`
	Removed   int `json:"removed"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
}

// Differs reports whether any object was added, removed or changed.
func (s SnapshotDiffSummary) Differs() bool { return s.Added+s.Removed+s.Changed > 0 }

// ObjectChange is one object that differs.
type ObjectChange struct {
	Ref    object.Ref `json:"ref"`
	Change string     `json:"change"`
	Diff   string     `json:"diff"`
	// Managers are the field managers that wrote the object since the
	// first side: for a changed object, those whose managedFields entry is
	// new or later; for an added one, all of them.
	Managers []ManagerWrite `json:"managers"`
}

// ManagerWrite is one managedFields entry: who wrote, how and when.
type ManagerWrite struct {
	Manager     string `json:"manager"`
	Operation   string `json:"operation"`
	Subresource string `json:"subresource"`
	Time        string `json:"time"`
}

// String prints "kubectl-edit (Update, 2026-11-21T10:00:00Z)".
func (m ManagerWrite) String() string {
	op := m.Operation
	if m.Subresource != "" {
		op += " " + m.Subresource
	}
	if m.Time != "" {
		op += ", " + m.Time
	}
	return m.Manager + " (" + op + ")"
}

// SnapshotDiffText writes d as terminal text, in the style of the plan.
func SnapshotDiffText(w io.Writer, d SnapshotDiff, opts TextOptions) error {
	_, err := io.WriteString(w, snapshotDiffText(d, opts.Color))
	return err
}

// SnapshotDiffJSON writes d as indented JSON.
func SnapshotDiffJSON(w io.Writer, d SnapshotDiff) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}

// snapshotDiffText prints res as terminal text, in the style of the plan: a header
// line with the counts, then one block per object that differs (symbol,
// ref, kind of change, the managers that wrote it, the indented diff).
func snapshotDiffText(res SnapshotDiff, color bool) string {
	paint := func(code, s string) string {
		if !color || code == "" || s == "" {
			return s
		}
		return code + s + ansiReset
	}
	var b strings.Builder
	s := res.Summary
	fmt.Fprintf(&b, "Diff %s -> %s: %d added, %d removed, %d changed, %d unchanged\n",
		clean(res.From), clean(res.To), s.Added, s.Removed, s.Changed, s.Unchanged)
	for _, c := range res.Changes {
		symbol, code, verb := "~", ansiYellow, "changed by"
		switch c.Change {
		case ChangeAdded:
			symbol, code, verb = "+", ansiGreen, "written by"
		case ChangeRemoved:
			symbol, code = "-", ansiRed
		}
		b.WriteString("\n" + paint(code, symbol+" "+clean(c.Ref.String())+" ("+c.Change+")") + "\n")
		if len(c.Managers) > 0 {
			ms := make([]string, len(c.Managers))
			for i, m := range c.Managers {
				ms[i] = clean(m.String())
			}
			b.WriteString(diffIndent + verb + " " + strings.Join(ms, ", ") + "\n")
		} else if c.Change == ChangeChanged && res.To == LiveTarget {
			b.WriteString(diffIndent + "changed by an unknown manager: no managedFields entry is newer than in the snapshot\n")
		}
		for _, l := range strings.Split(strings.TrimRight(clean(c.Diff), "\n"), "\n") {
			if l == "" {
				b.WriteString("\n")
				continue
			}
			b.WriteString(diffIndent + paint(diffColor(l), l) + "\n")
		}
	}
	if !s.Differs() {
		b.WriteString("\nNo differences.\n")
	}
	return b.String()
}

// diffIndent prefixes the lines under an object's header line.
const diffIndent = "    "

// Clean escapes control characters other than newline and tab, and
// bidirectional overrides, so that text from the cluster printed on a
// terminal cannot move the cursor, recolour it, or read in another order.
func Clean(s string) string { return clean(s) }
