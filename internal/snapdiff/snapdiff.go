// Package snapdiff compares snapshots: two snapshots of a store, or a
// snapshot with the live cluster (drift since the snapshot), by identity,
// with the field managers that changed each object. It returns data; package
// report renders it.
package snapdiff

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/report"
	"github.com/snapply/snapply/internal/secret"
	"github.com/snapply/snapply/internal/snapshot"
	"github.com/snapply/snapply/internal/store"
)

// diffItem is one object of a side of a diff: its ID, and the object once
// loaded (a live object comes loaded, a stored one is read when needed).
type diffItem struct {
	ref object.Ref
	id  store.ID
	obj *unstructured.Unstructured
}

// Store is what a diff reads of the store.
type Store interface {
	Snapshot(id string) (*store.Snapshot, error)
	Object(id store.ID) (*unstructured.Unstructured, error)
	Redactor() *secret.Redactor
}

// Snapshots compares snapshot a with snapshot b (IDs, unique prefixes, or
// "latest").
func Snapshots(db Store, a, b string) (report.SnapshotDiff, error) {
	from, err := db.Snapshot(a)
	if err != nil {
		return report.SnapshotDiff{}, err
	}
	to, err := db.Snapshot(b)
	if err != nil {
		return report.SnapshotDiff{}, err
	}
	res := report.SnapshotDiff{From: from.Meta.ID, To: to.Meta.ID}
	res.Summary, res.Changes, err = compareItems(entryItems(from.Entries), entryItems(to.Entries), res.From, res.To, db.Object)
	return res, err
}

// Live compares snapshot a with the live state of its objects in the
// cluster (drift since a), with the field managers that changed each
// object. Objects whose type the identity may not list are left out;
// progress is told about them and about the capture.
func Live(ctx context.Context, db Store, c *kube.Client, a string, progress func(string)) (report.SnapshotDiff, error) {
	from, err := db.Snapshot(a)
	if err != nil {
		return report.SnapshotDiff{}, err
	}
	res := report.SnapshotDiff{From: from.Meta.ID, To: report.LiveTarget}
	if from.Meta.Kind == store.Desired {
		progress(fmt.Sprintf("note: snapshot %s holds desired objects, not live ones: fields the server defaults show as differences", from.Meta.ID))
	}
	to, unknown, err := liveItems(ctx, db, c, from, progress)
	if err != nil {
		return res, err
	}
	fromItems := entryItems(from.Entries)
	if len(unknown) > 0 {
		fromItems = slices.DeleteFunc(fromItems, func(it diffItem) bool { return unknown[it.ref.Key()] })
	}
	res.Summary, res.Changes, err = compareItems(fromItems, to, res.From, res.To, db.Object)
	return res, err
}

func entryItems(entries []store.Entry) []diffItem {
	items := make([]diffItem, len(entries))
	for i, e := range entries {
		items[i] = diffItem{ref: e.Ref, id: e.ID}
	}
	return items
}

// liveItems captures the live state of the objects of snap, normalised and
// redacted as the store would keep them. unknown holds the objects of snap
// whose type the identity could not list: their drift is unknown.
func liveItems(ctx context.Context, db Store, client *kube.Client, snap *store.Snapshot, progress func(string)) (items []diffItem, unknown map[object.Key]bool, err error) {
	start := time.Now()
	refs := make([]object.Ref, len(snap.Entries))
	for i, e := range snap.Entries {
		refs[i] = e.Ref
	}
	opts := snapshot.DefaultOptions()
	opts.Scope = snapshot.ScopeManaged
	live, err := snapshot.Capture(ctx, client, refs, opts)
	if err != nil {
		return nil, nil, err
	}
	progress(fmt.Sprintf("live: %d of the %d objects of snapshot %s (%d list requests) in %s", len(live.Objects), len(refs), snap.Meta.ID, live.Lists, time.Since(start).Round(time.Millisecond)))
	if len(live.Skipped) > 0 {
		unknown = skippedKeys(client, refs, live.Skipped)
		for _, s := range live.Skipped {
			progress(fmt.Sprintf("warning: skipped %s: its objects are not compared", s))
		}
	}
	r := db.Redactor()
	items = make([]diffItem, 0, len(live.Objects))
	for _, u := range live.Objects {
		// The same form as the store's: resourceVersion dropped, Secret
		// values replaced by digests under the store's key.
		n, _ := store.Normalize(r, u)
		items = append(items, diffItem{ref: object.RefOf(u), id: store.Hash(n.Object), obj: n})
	}
	return items, unknown, nil
}

// skippedKeys returns the refs whose type is among the skipped resources
// (or in an API group version whose discovery failed).
func skippedKeys(c *kube.Client, refs []object.Ref, skipped []snapshot.Skipped) map[object.Key]bool {
	gvrs := map[schema.GroupVersionResource]bool{}
	for _, s := range skipped {
		gvrs[s.GVR] = true
	}
	out := map[object.Key]bool{}
	for _, r := range refs {
		m, err := c.Mapping(r.GroupKind().WithVersion(""))
		if err != nil {
			continue // not served: not listed, so not skipped either
		}
		if gvrs[m.Resource] || gvrs[m.Resource.GroupVersion().WithResource("")] {
			out[r.Key()] = true
		}
	}
	return out
}

// compareItems compares two sides by identity. Objects with the same ID
// are unchanged without being read; others are read with load when not
// loaded, and count as changed only when they differ outside status and
// server-managed metadata. Diffs mark their sides fromName and toName.
// Changes are sorted by object.Compare.
func compareItems(from, to []diffItem, fromName, toName string, load func(store.ID) (*unstructured.Unstructured, error)) (report.SnapshotDiffSummary, []report.ObjectChange, error) {
	diff := func(k object.Key, a, b *unstructured.Unstructured) string {
		return plan.DiffSides(k.String(), fromName, toName, a, b, 3)
	}
	get := func(it *diffItem) (*unstructured.Unstructured, error) {
		if it.obj == nil {
			u, err := load(it.id)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", it.ref, err)
			}
			it.obj = u
		}
		return it.obj, nil
	}
	index := make(map[object.Key]*diffItem, len(from))
	for i := range from {
		index[from[i].ref.Key()] = &from[i]
	}
	var sum report.SnapshotDiffSummary
	changes := []report.ObjectChange{}
	seen := make(map[object.Key]bool, len(to))
	for i := range to {
		b := &to[i]
		k := b.ref.Key()
		seen[k] = true
		a := index[k]
		switch {
		case a == nil:
			ub, err := get(b)
			if err != nil {
				return sum, nil, err
			}
			sum.Added++
			changes = append(changes, report.ObjectChange{Ref: b.ref, Change: report.ChangeAdded, Diff: diff(k, nil, ub), Managers: newerWrites(nil, ub)})
		case a.id == b.id:
			sum.Unchanged++
		default:
			ua, err := get(a)
			if err != nil {
				return sum, nil, err
			}
			ub, err := get(b)
			if err != nil {
				return sum, nil, err
			}
			d := diff(k, ua, ub)
			if d == "" {
				sum.Unchanged++
				continue
			}
			sum.Changed++
			changes = append(changes, report.ObjectChange{Ref: b.ref, Change: report.ChangeChanged, Diff: d, Managers: newerWrites(ua, ub)})
		}
	}
	for i := range from {
		a := &from[i]
		k := a.ref.Key()
		if seen[k] {
			continue
		}
		ua, err := get(a)
		if err != nil {
			return sum, nil, err
		}
		sum.Removed++
		changes = append(changes, report.ObjectChange{Ref: a.ref, Change: report.ChangeRemoved, Diff: diff(k, ua, nil), Managers: []report.ManagerWrite{}})
	}
	slices.SortStableFunc(changes, func(x, y report.ObjectChange) int { return object.Compare(x.Ref, y.Ref) })
	return sum, changes, nil
}

// newerWrites returns the managedFields entries of after that are not in
// before, or are later than there, oldest first. An entry is identified
// as the API server does: by manager, operation and subresource, and, for
// an Update, the API version.
func newerWrites(before, after *unstructured.Unstructured) []report.ManagerWrite {
	type id struct{ manager, operation, subresource, apiVersion string }
	key := func(e map[string]any) id {
		k := id{manager: str(e, "manager"), operation: str(e, "operation"), subresource: str(e, "subresource")}
		if k.operation != "Apply" {
			k.apiVersion = str(e, "apiVersion")
		}
		return k
	}
	old := map[id]string{}
	for _, e := range managedFields(before) {
		old[key(e)] = str(e, "time")
	}
	out := []report.ManagerWrite{}
	for _, e := range managedFields(after) {
		t := str(e, "time")
		if prev, ok := old[key(e)]; ok && !later(t, prev) {
			continue
		}
		out = append(out, report.ManagerWrite{Manager: str(e, "manager"), Operation: str(e, "operation"), Subresource: str(e, "subresource"), Time: t})
	}
	slices.SortStableFunc(out, func(a, b report.ManagerWrite) int {
		if c := parseTime(a.Time).Compare(parseTime(b.Time)); c != 0 {
			return c
		}
		return strings.Compare(a.Manager, b.Manager)
	})
	return out
}

// managedFields returns the entries of u's metadata.managedFields.
func managedFields(u *unstructured.Unstructured) []map[string]any {
	if u == nil {
		return nil
	}
	list, _, _ := unstructured.NestedSlice(u.Object, "metadata", "managedFields")
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// later reports whether the managedFields time a is after b. Times that
// do not parse compare as strings: a differing one counts as later.
func later(a, b string) bool {
	ta, errA := time.Parse(time.RFC3339, a)
	tb, errB := time.Parse(time.RFC3339, b)
	if errA != nil || errB != nil {
		return a != b
	}
	return ta.After(tb)
}

// parseTime parses a managedFields time; one that does not parse is zero.
func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s)
	return t
}
