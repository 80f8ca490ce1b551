package store

import (
	"context"
	"testing"
	"time"

	"github.com/snapply/snapply/internal/object"
)

// RunWithAfter finds the run by its after snapshot, with what the known
// test needs: the server version, and each record's fields digest and CRD
// generation.
func TestRunWithAfter(t *testing.T) {
	db := openTest(t)
	a := newApp(3)
	objs := a.objs
	before := put(t, db, Before, objs)
	after := put(t, db, After, objs)
	ref := object.RefOf(objs[0])
	run := Run{
		Before: before.ID, After: after.ID, ServerVersion: "v1.36.3", Created: time.Now(),
		Records: []Record{{Ref: ref, Action: "create", Outcome: "applied", Fields: "sha256:ab", CRDGeneration: 4}},
	}
	if err := db.PutRun(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got, err := db.RunWithAfter(after.ID)
	if err != nil || got == nil {
		t.Fatalf("RunWithAfter(%s) = %v, %v", after.ID, got, err)
	}
	if got.ServerVersion != "v1.36.3" || len(got.Records) != 1 || got.Records[0].Fields != "sha256:ab" || got.Records[0].CRDGeneration != 4 {
		t.Errorf("run %+v", got)
	}
	for _, id := range []string{before.ID, "", "20990101T000000Z-000000"} {
		if got, err := db.RunWithAfter(id); err != nil || got != nil {
			t.Errorf("RunWithAfter(%q) = %v, %v; want none", id, got, err)
		}
	}
}
