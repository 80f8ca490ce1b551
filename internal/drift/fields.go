package drift

import (
	"bytes"
	"encoding/json"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/snapply/snapply/internal/plan"
)

// entry is one managedFields entry with its field set parsed.
type entry struct {
	manager, operation, subresource, time string
	set                                   *fieldpath.Set
}

// entries parses u's managedFields; entries that do not parse are left
// out.
func entries(u *unstructured.Unstructured) []entry {
	list, _, _ := unstructured.NestedSlice(u.Object, "metadata", "managedFields")
	out := make([]entry, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		raw, err := json.Marshal(m["fieldsV1"])
		if err != nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
			continue
		}
		e := entry{set: set}
		e.manager, _ = m["manager"].(string)
		e.operation, _ = m["operation"].(string)
		e.subresource, _ = m["subresource"].(string)
		e.time, _ = m["time"].(string)
		out = append(out, e)
	}
	return out
}

// ours returns the fields snapply applies in es: the set of its Apply
// entry on the main resource.
func ours(es []entry) *fieldpath.Set {
	for _, e := range es {
		if e.manager == Manager && e.operation == "Apply" && e.subresource == "" {
			return e.set
		}
	}
	return &fieldpath.Set{}
}

// compareFields compares the fields git sets (those snapply owns in
// after, the dry run of git) between live and after: the ones whose value
// differs, with the live owner, and the ones another manager took with a
// force-apply, and the paths of the fields that differ.
func compareFields(live, after *unstructured.Unstructured) ([]Field, []Ownership, []fieldpath.Path) {
	liveEntries := entries(live)
	liveOurs := ours(liveEntries)
	fields, owned := []Field{}, []Ownership{}
	var paths []fieldpath.Path
	ours(entries(after)).Leaves().Iterate(func(p fieldpath.Path) {
		gv, gok := plan.ValueAt(after.Object, p)
		lv, lok := plan.ValueAt(live.Object, p)
		owner := ownerOf(liveEntries, p)
		if gok != lok || !reflect.DeepEqual(gv, lv) {
			f := Field{Path: plan.FieldPath(p), Git: show(gv, gok), Live: show(lv, lok)}
			if owner != nil {
				f.Manager, f.Operation, f.Time = owner.manager, owner.operation, owner.time
			}
			fields = append(fields, f)
			paths = append(paths, p.Copy())
		}
		if !liveOurs.Has(p) && owner != nil && owner.operation == "Apply" {
			owned = append(owned, Ownership{Path: plan.FieldPath(p), Manager: owner.manager, Operation: owner.operation, Time: owner.time})
		}
	})
	return fields, owned, paths
}

// ownerOf returns the latest entry other than snapply's that owns p, else
// snapply's, else nil.
func ownerOf(es []entry, p fieldpath.Path) *entry {
	var best *entry
	for i := range es {
		e := &es[i]
		if !e.set.Has(p) {
			continue
		}
		switch {
		case best == nil:
			best = e
		case best.manager == Manager && e.manager != Manager:
			best = e
		case e.manager != Manager && later(e.time, best.time):
			best = e
		}
	}
	return best
}

func later(a, b string) bool {
	ta, errA := time.Parse(time.RFC3339, a)
	tb, errB := time.Parse(time.RFC3339, b)
	return errA == nil && errB == nil && ta.After(tb)
}

// maxValue is the longest value a Field shows.
const maxValue = 120

// show prints a value as compact JSON, strings bare, cut at maxValue.
func show(v any, ok bool) string {
	if !ok {
		return "(absent)"
	}
	var s string
	if str, isStr := v.(string); isStr {
		s = str
	} else {
		b, err := json.Marshal(v)
		if err != nil {
			return "?"
		}
		s = string(b)
	}
	if len(s) > maxValue {
		s = s[:maxValue-3] + "..."
	}
	return s
}
