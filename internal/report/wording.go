package report

import (
	"fmt"
	"strings"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

// forceAnnotation is the annotation that lets snapply force one object.
const forceAnnotation = `snapply.dev/force-conflicts: "true"`

// forceFlag is the flag that lets snapply force every object.
const forceFlag = "--force-conflicts"

// noChangesLine ends a report of a plan that changes nothing.
const noChangesLine = "No changes. The cluster matches the desired state."

// omittedNote replaces what a size limit leaves out.
const omittedNote = "too large, see the job summary / `snapply show`"

// symbol returns the one-character mark of an action in text reports.
func symbol(a plan.Action) string {
	switch a {
	case plan.Create:
		return "+"
	case plan.Update:
		return "~"
	case plan.Delete:
		return "-"
	case plan.Conflict, plan.Invalid:
		return "!"
	case plan.Pending:
		return "?"
	}
	return " "
}

// label names the action of c, calling out destructive deletes.
func label(c plan.Change) string {
	if c.Action == plan.Delete && c.Destructive {
		return "delete, destructive"
	}
	return string(c.Action)
}

// destructiveWhat says in a few words what deleting r takes along.
func destructiveWhat(r object.Ref) string {
	switch {
	case r.Group == "" && r.Kind == "Namespace":
		return "deleting this Namespace deletes every object in it"
	case r.Group == "apiextensions.k8s.io" && r.Kind == "CustomResourceDefinition":
		return "deleting this CustomResourceDefinition deletes every custom resource of its kind"
	}
	return "deleting this object deletes the objects it holds"
}

// destructiveNote explains why deleting r is destructive and what apply
// does about it.
func destructiveNote(r object.Ref) string {
	return destructiveWhat(r) + "; apply refuses it unless allowed (--allow-destructive, or the allow-destructive input)"
}

// waysOut returns the two ways out of a conflict, with the annotation and
// the flag passed through code (for quoting).
func waysOut(code func(string) string) [2]string {
	return [2]string{
		"change git to accept the live value of these fields",
		fmt.Sprintf("force this object: annotation %s on the object, or %s", code(forceAnnotation), code(forceFlag)),
	}
}

// blockedLine says which objects an apply would not write (and so fail
// on), or returns "" when there are none. The other objects are written.
func blockedLine(s plan.Summary) string {
	var parts []string
	if s.Conflict > 0 {
		parts = append(parts, plural(s.Conflict, "conflict", "conflicts"))
	}
	if s.Invalid > 0 {
		parts = append(parts, plural(s.Invalid, "invalid object", "invalid objects"))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Apply would fail: " + strings.Join(parts, " and ") + " would not be written (the other objects would)."
}

// plural returns "n one" or "n many".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// imageText prints one image change as "web: nginx:1.27.0 -> nginx:1.27.3",
// with the container and the images passed through code (for quoting).
func imageText(ic plan.ImageChange, code func(string) string) string {
	switch {
	case ic.Old == "":
		return fmt.Sprintf("%s: %s (new)", code(ic.Container), code(ic.New))
	case ic.New == "":
		return fmt.Sprintf("%s: %s (removed)", code(ic.Container), code(ic.Old))
	}
	return fmt.Sprintf("%s: %s -> %s", code(ic.Container), code(ic.Old), code(ic.New))
}

// plain quotes nothing: the code function of text reports.
func plain(s string) string { return s }

// clean replaces control characters other than newline and tab with their
// Go escapes, so that text from manifests or the API server cannot move the
// cursor or colour a terminal.
func clean(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isControl reports whether r is a C0 or C1 control character other than
// newline and tab, or one of the bidirectional overrides that make text
// display in another order than it reads.
func isControl(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// verificationLine says how the plan's objects were checked, "N dry runs,
// M known unchanged", or "" when none was (a plan of deletes only).
func verificationLine(p *plan.Plan) string {
	dryRuns, known := p.Verification()
	if dryRuns == 0 && known == 0 {
		return ""
	}
	return fmt.Sprintf("%s, %d known unchanged", plural(dryRuns, "dry run", "dry runs"), known)
}
