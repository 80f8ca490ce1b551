package engine

import (
	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/store"
)

// KnownApplied returns, for apply, the desired objects that the last apply
// of this inventory applied exactly as they are now, with the
// resourceVersion that apply left each at (its after snapshot). The planner
// skips their dry run when the live object still has that resourceVersion:
// nobody wrote it since, and applying the same bytes again is a no-op.
//
// It needs the last apply's records in this store (the inventory names the
// after snapshot); a store without them (a fresh CI job that did not bring
// the previous artifact) gives nothing, and every object is dry-run.
func KnownApplied(db *store.DB, inv *apply.Inventory, desired []object.Object) map[object.Key]string {
	after := inv.Annotations[apply.LastSnapshotAnnotation]
	if after == "" {
		return nil
	}
	runs, err := db.Runs()
	if err != nil {
		return nil
	}
	var run *store.Run
	for i := range runs {
		if runs[i].After == after {
			run = &runs[i]
		}
	}
	if run == nil || run.Interrupted {
		return nil
	}
	applied, err := db.Snapshot(run.Desired)
	if err != nil {
		return nil
	}
	left, err := db.Snapshot(run.After)
	if err != nil {
		return nil
	}
	ids := make(map[object.Key]store.ID, len(applied.Entries))
	for _, e := range applied.Entries {
		ids[e.Ref.Key()] = e.ID
	}
	rvs := make(map[object.Key]string, len(left.Entries))
	for _, e := range left.Entries {
		rvs[e.Ref.Key()] = e.ResourceVersion
	}
	known := make(map[object.Key]string, len(desired))
	for _, d := range desired {
		k := d.Ref.Key()
		id, ok := ids[k]
		if !ok || rvs[k] == "" || store.ObjectID(db.Redactor(), d.Obj) != id {
			continue
		}
		known[k] = rvs[k]
	}
	return known
}
