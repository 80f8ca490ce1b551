package store

import (
	"encoding/json"
	"testing"
)

// TestSizeUnchangedSnapshot: a second snapshot of an unchanged cluster
// grows the file by under 1% of the first snapshot's bytes.
func TestSizeUnchangedSnapshot(t *testing.T) {
	a := newApp(1000)
	var raw int
	for _, u := range a.objs {
		b, _ := json.Marshal(u.Object)
		raw += len(b)
	}
	t.Logf("1000 objects, %d bytes of JSON (%d per object)", raw, raw/1000)

	db := openTest(t)
	db = reopen(t, db, DefaultOptions())
	empty := fileSize(t, db.Path())
	put(t, db, Before, a.objs)
	db = reopen(t, db, DefaultOptions())
	first := fileSize(t, db.Path())
	put(t, db, Before, a.objs)
	db = reopen(t, db, DefaultOptions())
	second := fileSize(t, db.Path())
	t.Logf("empty store %d bytes; one snapshot %d bytes; two snapshots %d bytes (+%d)", empty, first, second, second-first)
	if grow := second - first; float64(grow) >= 0.01*float64(first) {
		t.Errorf("second snapshot of an unchanged cluster grew the file by %d bytes, want under 1%% of %d", grow, first)
	}
}

// TestSizeManySnapshots: 100 snapshots of a 1,000-object app with 1% of
// the objects changed between consecutive snapshots take under 3 times
// the bytes of one snapshot.
func TestSizeManySnapshots(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	a := newApp(1000)
	db := openTest(t)
	put(t, db, Before, a.objs)
	db = reopen(t, db, DefaultOptions())
	one := fileSize(t, db.Path())
	for i := 1; i < 100; i++ {
		a.change(10)
		put(t, db, Before, a.objs)
		db = reopen(t, db, DefaultOptions())
	}
	hundred := fileSize(t, db.Path())
	t.Logf("one snapshot %d bytes; 100 snapshots %d bytes (%.2fx)", one, hundred, float64(hundred)/float64(one))
	if float64(hundred) >= 3*float64(one) {
		t.Errorf("100 snapshots take %d bytes, want under 3 x %d", hundred, one)
	}
	// Every snapshot still reads back whole.
	metas, err := db.Snapshots()
	if err != nil {
		t.Fatal(err)
	}
	if len(metas) != 100 {
		t.Fatalf("%d snapshots, want 100", len(metas))
	}
	s, err := db.Snapshot(Latest)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range s.Entries {
		if i%97 != 0 {
			continue
		}
		if _, err := db.Object(e.ID); err != nil {
			t.Fatal(err)
		}
	}
}
