package report

import (
	"fmt"
	"strings"

	"github.com/snapply/snapply/internal/plan"
)

// DiffMode chooses how a text or markdown plan shows what an update
// changes.
type DiffMode string

// The diff modes of --diff.
const (
	// DiffStructural shows the changed fields, list items named by key
	// (the default). A change without a field diff (a create, a delete, a
	// plan that was not analysed) shows its unified diff.
	DiffStructural DiffMode = "structural"
	// DiffUnified shows the unified YAML diff.
	DiffUnified DiffMode = "unified"
	// DiffBoth shows the changed fields, then the unified diff.
	DiffBoth DiffMode = "both"
)

// DiffModes lists the values of --diff.
var DiffModes = []DiffMode{DiffStructural, DiffUnified, DiffBoth}

// ParseDiffMode parses a --diff value.
func ParseDiffMode(s string) (DiffMode, error) {
	for _, m := range DiffModes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown diff mode %q: want structural, unified or both", s)
}

// showFields and showUnified say what mode m shows of c.
func (m DiffMode) showFields(c plan.Change) bool {
	return m != DiffUnified && len(c.Fields) > 0
}

func (m DiffMode) showUnified(c plan.Change) bool {
	return c.Diff != "" && (m == DiffUnified || m == DiffBoth || len(c.Fields) == 0)
}

// maxValueRunes is the longest field value a text or markdown plan shows.
const maxValueRunes = 120

// fieldLines renders a field diff, one line per field:
//
//	~ path: before -> after
//	+ path: after
//	- path: before
func fieldLines(fs []plan.FieldDiff) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		v := func(s string) string { return truncate(oneLine(s), maxValueRunes) }
		switch f.Op {
		case plan.FieldAdd:
			out = append(out, "+ "+f.Path+": "+v(f.After))
		case plan.FieldRemove:
			out = append(out, "- "+f.Path+": "+v(f.Before))
		default:
			out = append(out, "~ "+f.Path+": "+v(f.Before)+" -> "+v(f.After))
		}
	}
	return out
}

// riskCounts prints "1 replace, 2 data-loss", or "" when p has no risks.
func riskCounts(p *plan.Plan) string {
	var parts []string
	for _, rc := range p.RiskCounts() {
		parts = append(parts, fmt.Sprintf("%d %s", rc.Count, rc.Kind))
	}
	return strings.Join(parts, ", ")
}

// imageCounts prints "2 new, 1 changed, 0 removed, 5 unchanged".
func imageCounts(images []plan.ImageUse) string {
	n := map[plan.ImageStatus]int{}
	for _, u := range images {
		n[u.Status]++
	}
	return fmt.Sprintf("%d new, %d changed, %d removed, %d unchanged",
		n[plan.ImageNew], n[plan.ImageChanged], n[plan.ImageRemoved], n[plan.ImageUnchanged])
}

// imageUseText prints "before -> after" for one row of the inventory.
func imageUseText(u plan.ImageUse, code func(string) string) string {
	switch u.Status {
	case plan.ImageNew:
		return code(u.After)
	case plan.ImageRemoved, plan.ImageUnchanged:
		return code(u.Before)
	}
	return code(u.Before) + " -> " + code(u.After)
}
