package action

import (
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

// Annotate emits a workflow annotation for each change of p that stops an
// apply: "::error" for an invalid object and "::warning" for a conflict,
// with the object and the action as title (and, for an object rendered from
// a Helm chart, the chart, its version and the template:
// "deployment.apps/web -n prod: invalid (web@1.2.0 templates/deployment.yaml)"),
// and file and line when the change has a source, so that GitHub shows them
// in the pull request's "Files changed" tab; a chart's object points at
// its helmCharts entry.
//
// The file is the change's source as package render names it: relative to
// the root of the git repository that holds the rendered path, which is
// what GitHub expects, also when the repository is checked out in a
// subdirectory of the workspace. No path input is prefixed. A source that is
// absolute or leaves the repository gets no file property. GitHub shows at
// most ten annotations of each level per step; invalid objects come first.
func Annotate(a *githubactions.Action, p *plan.Plan) {
	if p == nil {
		return
	}
	for _, c := range p.Changes {
		if c.Action == plan.Invalid {
			msg := c.Message
			if msg == "" {
				msg = "the API server refused the object"
			}
			a.WithFieldsMap(annotationFields(c)).Errorf("%s", msg)
		}
	}
	for _, c := range p.Changes {
		if c.Action == plan.Conflict {
			a.WithFieldsMap(annotationFields(c)).Warningf("%s", conflictMessage(c))
		}
	}
}

// annotationFields returns the file, line and title properties of c's
// annotation.
func annotationFields(c plan.Change) map[string]string {
	title := c.Ref.String() + ": " + string(c.Action)
	if c.Source.Chart != "" {
		// The file and line point at the helmCharts entry; the title
		// names the chart, its version and the template.
		title += " (" + object.Source{Chart: c.Source.Chart, Template: c.Source.Template}.String() + ")"
	}
	f := map[string]string{"title": title}
	file := filepath.ToSlash(c.Source.File)
	if file == "" || path.IsAbs(file) || filepath.IsAbs(c.Source.File) {
		return f
	}
	file = path.Clean(file)
	if file == ".." || strings.HasPrefix(file, "../") {
		return f
	}
	f["file"] = file
	if c.Source.Line > 0 {
		f["line"] = strconv.Itoa(c.Source.Line)
	}
	return f
}

// conflictMessage names the conflicting fields and their managers, then
// the plan's explanation (the ways out).
func conflictMessage(c plan.Change) string {
	var b strings.Builder
	if len(c.Conflicts) > 0 {
		b.WriteString("fields owned by another field manager: ")
		for i, fc := range c.Conflicts {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(fc.Field + " (" + fc.Manager + ")")
		}
	}
	if c.Message != "" {
		if b.Len() > 0 {
			b.WriteString(". ")
		}
		b.WriteString(c.Message)
	}
	if b.Len() == 0 {
		return "fields owned by another field manager"
	}
	return b.String()
}
