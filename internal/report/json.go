package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/snapply/snapply/internal/object"
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
//	              "fields": [{"path", "op", "before", "after"}],
//	              "risks": [{"kind", "message"}],
//	              "verified": "dry-run|record|"}],
//	 "images": [{"ref": {...}, "container", "before", "after", "status"}]}
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
		Snapshot string          `json:"snapshot"`
		Summary  jsonSummary     `json:"summary"`
		Changes  []jsonChange    `json:"changes"`
		Images   []jsonImageUse  `json:"images"`
		Policy   jsonPolicyCount `json:"policy"`
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
		Fields              []jsonField    `json:"fields"`
		Risks               []jsonRisk     `json:"risks"`
		Policy              []jsonPolicy   `json:"policy"`
		Verified            string         `json:"verified"`
	}
	jsonField struct {
		Path   string `json:"path"`
		Op     string `json:"op"`
		Before string `json:"before"`
		After  string `json:"after"`
	}
	jsonRisk struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}
	jsonImageUse struct {
		Ref       jsonRef `json:"ref"`
		Container string  `json:"container"`
		Before    string  `json:"before"`
		After     string  `json:"after"`
		Status    string  `json:"status"`
	}
	jsonRef struct {
		Group     string `json:"group"`
		Version   string `json:"version"`
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	}
	jsonSource struct {
		File     string `json:"file"`
		Line     int    `json:"line"`
		Chart    string `json:"chart,omitempty"`
		Template string `json:"template,omitempty"`
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
		Images:  make([]jsonImageUse, 0, len(p.Images)),
	}
	for _, u := range p.Images {
		out.Images = append(out.Images, jsonImageUse{Ref: toJSONRef(u.Ref), Container: u.Container, Before: u.Before, After: u.After, Status: string(u.Status)})
	}
	out.Policy.Deny, out.Policy.Warn = p.PolicyCounts()
	for _, c := range p.Changes {
		jc := jsonChange{
			Ref:                 toJSONRef(c.Ref),
			Action:              string(c.Action),
			Source:              jsonSourceOf(c.Source),
			Diff:                c.Diff,
			Conflicts:           make([]jsonConflict, 0, len(c.Conflicts)),
			Message:             c.Message,
			Images:              make([]jsonImage, 0, len(c.Images)),
			Warnings:            append(make([]string, 0, len(c.Warnings)), c.Warnings...),
			Destructive:         c.Destructive,
			LiveResourceVersion: c.LiveResourceVersion,
			Fields:              make([]jsonField, 0, len(c.Fields)),
			Risks:               make([]jsonRisk, 0, len(c.Risks)),
			Verified:            string(c.Verified),
		}
		for _, f := range c.Fields {
			jc.Fields = append(jc.Fields, jsonField{Path: f.Path, Op: string(f.Op), Before: f.Before, After: f.After})
		}
		for _, r := range c.Risks {
			jc.Risks = append(jc.Risks, jsonRisk{Kind: string(r.Kind), Message: r.Message})
		}
		for _, fc := range c.Conflicts {
			jc.Conflicts = append(jc.Conflicts, jsonConflict{Field: fc.Field, Manager: fc.Manager})
		}
		for _, ic := range c.Images {
			jc.Images = append(jc.Images, jsonImage{Container: ic.Container, Old: ic.Old, New: ic.New})
		}
		jc.Policy = toJSONPolicy(c.Policy)
		out.Changes = append(out.Changes, jc)
	}
	return out
}

// jsonSourceOf returns the JSON form of a source: chart and template only
// for an object rendered from a Helm chart.
func jsonSourceOf(s object.Source) jsonSource {
	return jsonSource{File: s.File, Line: s.Line, Chart: s.Chart, Template: s.Template}
}

// toJSONRef converts a ref to its JSON contract.
func toJSONRef(r object.Ref) jsonRef {
	return jsonRef{Group: r.Group, Version: r.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}
