package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/snapply/snapply/internal/plan"
)

// JSON writes p as indented JSON with a stable contract:
//
//	{"snapshot": "<id>",
//	 "summary": {"create": N, "update": N, "unchanged": N, "delete": N,
//	             "conflict": N, "invalid": N, "pending": N},
//	 "changes": [{"ref": {"group", "version", "kind", "namespace", "name"},
//	              "action": "...", "source": {"file", "line"}, "diff": "...",
//	              "conflicts": [{"field", "manager"}], "message": "...",
//	              "images": [{"container", "old", "new"}], "warnings": ["..."],
//	              "destructive": false, "liveResourceVersion": "...",
//	              "verified": "dry-run|record|"}]}
//
// Every key is always present, empty lists are [] and never null, and
// changes lists every object, unchanged ones included, in plan order.
// verified says how an object's action was found: "dry-run" (the API
// server answered a dry run), "record" (known unchanged from the record of
// the last apply, without a request), or "" (deletes, pending objects and
// kinds the server does not serve, which neither checks). Later versions may add keys; they never remove or retype one.
func JSON(w io.Writer, p *plan.Plan) error {
	if p == nil {
		return errors.New("json report: nil plan")
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(toJSONPlan(p)); err != nil {
		return fmt.Errorf("json report: %w", err)
	}
	return nil
}

// The JSON contract is spelled out in these types rather than borrowed
// from package plan, whose tags omit empty values: a consumer can rely on
// every key being there.
type (
	jsonPlan struct {
		Snapshot string       `json:"snapshot"`
		Summary  jsonSummary  `json:"summary"`
		Changes  []jsonChange `json:"changes"`
	}
	jsonSummary struct {
		Create    int `json:"create"`
		Update    int `json:"update"`
		Unchanged int `json:"unchanged"`
		Delete    int `json:"delete"`
		Conflict  int `json:"conflict"`
		Invalid   int `json:"invalid"`
		Pending   int `json:"pending"`
	}
	jsonChange struct {
		Ref                 jsonRef        `json:"ref"`
		Action              string         `json:"action"`
		Source              jsonSource     `json:"source"`
		Diff                string         `json:"diff"`
		Conflicts           []jsonConflict `json:"conflicts"`
		Message             string         `json:"message"`
		Images              []jsonImage    `json:"images"`
		Warnings            []string       `json:"warnings"`
		Destructive         bool           `json:"destructive"`
		LiveResourceVersion string         `json:"liveResourceVersion"`
		Verified            string         `json:"verified"`
	}
	jsonRef struct {
		Group     string `json:"group"`
		Version   string `json:"version"`
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	}
	jsonSource struct {
		File string `json:"file"`
		Line int    `json:"line"`
	}
	jsonConflict struct {
		Field   string `json:"field"`
		Manager string `json:"manager"`
	}
	jsonImage struct {
		Container string `json:"container"`
		Old       string `json:"old"`
		New       string `json:"new"`
	}
)

// toJSONPlan converts p to its JSON contract.
func toJSONPlan(p *plan.Plan) jsonPlan {
	s := p.Summary
	out := jsonPlan{
		Snapshot: p.Snapshot,
		Summary: jsonSummary{
			Create: s.Create, Update: s.Update, Unchanged: s.Unchanged, Delete: s.Delete,
			Conflict: s.Conflict, Invalid: s.Invalid, Pending: s.Pending,
		},
		Changes: make([]jsonChange, 0, len(p.Changes)),
	}
	for _, c := range p.Changes {
		jc := jsonChange{
			Ref: jsonRef{
				Group: c.Ref.Group, Version: c.Ref.Version, Kind: c.Ref.Kind,
				Namespace: c.Ref.Namespace, Name: c.Ref.Name,
			},
			Action:              string(c.Action),
			Source:              jsonSource{File: c.Source.File, Line: c.Source.Line},
			Diff:                c.Diff,
			Conflicts:           make([]jsonConflict, 0, len(c.Conflicts)),
			Message:             c.Message,
			Images:              make([]jsonImage, 0, len(c.Images)),
			Warnings:            append(make([]string, 0, len(c.Warnings)), c.Warnings...),
			Destructive:         c.Destructive,
			LiveResourceVersion: c.LiveResourceVersion,
			Verified:            string(c.Verified),
		}
		for _, fc := range c.Conflicts {
			jc.Conflicts = append(jc.Conflicts, jsonConflict{Field: fc.Field, Manager: fc.Manager})
		}
		for _, ic := range c.Images {
			jc.Images = append(jc.Images, jsonImage{Container: ic.Container, Old: ic.Old, New: ic.New})
		}
		out.Changes = append(out.Changes, jc)
	}
	return out
}
