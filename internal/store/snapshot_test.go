package store

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/object"
)

func TestSnapshotRoundTrip(t *testing.T) {
	db := openTest(t)
	a := newApp(30)
	created := time.Date(2026, 11, 21, 14, 30, 0, 123456789, time.FixedZone("CET", 3600))
	meta := Meta{
		Created: created,
		Kind:    After,
		Cluster: Cluster{Server: "8f3a2c0d9e1b4a57", Context: "prod"},
		Source: Source{
			Commit: "0123456789abcdef0123456789abcdef01234567", Ref: "refs/heads/main", RunID: "4711", RunAttempt: "2",
			Workflow: "deploy", Actor: "octocat", Repository: "acme/shop", PR: 42, Restores: "20261120T000000Z-abcdef",
		},
		ToolVersion: "v0.1.0",
		Scope:       "namespaces",
		Skipped:     []string{"metrics.k8s.io/PodMetrics: forbidden"},
	}
	got, err := db.PutSnapshot(t.Context(), meta, a.objs)
	if err != nil {
		t.Fatal(err)
	}
	want := meta
	want.Created = created.UTC()
	want.Count = 30
	want.ID = "20261121T133000Z-" + strings.TrimPrefix(got.ID, "20261121T133000Z-")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PutSnapshot() meta mismatch (-want +got):\n%s", diff)
	}
	if len(got.ID) != len("20261121T133000Z-8f3a2c") {
		t.Errorf("ID %q: want the form 20261121T133000Z-8f3a2c", got.ID)
	}

	db = reopen(t, db, DefaultOptions())
	s, err := db.Snapshot(got.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, s.Meta); diff != "" {
		t.Errorf("stored meta mismatch (-want +got):\n%s", diff)
	}
	wantEntries := make([]Entry, 0, len(a.objs))
	for _, u := range a.objs {
		wantEntries = append(wantEntries, Entry{Ref: object.RefOf(u), ID: ObjectID(db.Redactor(), u), ResourceVersion: u.GetResourceVersion()})
	}
	sortEntries(wantEntries)
	if diff := cmp.Diff(wantEntries, s.Entries); diff != "" {
		t.Errorf("entries mismatch (-want +got):\n%s", diff)
	}
	for i, e := range s.Entries {
		if e.ResourceVersion == "" {
			t.Errorf("entry %d (%s) has no resourceVersion", i, e.Ref)
		}
		u, err := db.Object(e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if u.GetResourceVersion() != "" {
			t.Errorf("stored %s keeps resourceVersion %q", e.Ref, u.GetResourceVersion())
		}
		if object.RefOf(u) != e.Ref {
			t.Errorf("object %s is %s, want %s", e.ID, object.RefOf(u), e.Ref)
		}
	}
}

func sortEntries(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int { return object.Compare(a.Ref, b.Ref) })
}

func TestSnapshotsOrder(t *testing.T) {
	db := openTest(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var want []string
	// Written out of order: listed by creation time.
	for _, d := range []time.Duration{2 * time.Hour, 0, time.Hour, 3 * time.Hour} {
		m, err := db.PutSnapshot(t.Context(), Meta{Kind: Before, Created: base.Add(d)}, newApp(3).objs)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, m.ID)
	}
	want = []string{want[1], want[2], want[0], want[3]}
	metas, err := db.Snapshots()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range metas {
		got = append(got, m.ID)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Snapshots() order (-want +got):\n%s", diff)
	}
	s, err := db.Snapshot(Latest)
	if err != nil {
		t.Fatal(err)
	}
	if s.Meta.ID != want[3] {
		t.Errorf("latest = %s, want %s", s.Meta.ID, want[3])
	}
}

func TestSnapshotLookup(t *testing.T) {
	db := openTest(t)
	objs := newApp(2).objs
	ids := []string{"20261121T143000Z-8f3a2c", "20261121T143000Z-8f3b00", "20261121T150000Z-000000"}
	for _, id := range ids {
		if _, err := db.PutSnapshot(t.Context(), Meta{ID: id, Kind: Before}, objs); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		id      string
		want    string
		wantErr error
		errHas  string
	}{
		{name: "full ID", id: ids[0], want: ids[0]},
		{name: "unique prefix", id: "20261121T1500", want: ids[2]},
		{name: "prefix unique by its last digit", id: "20261121T143000Z-8f3b", want: ids[1]},
		{name: "ambiguous prefix", id: "20261121T143000Z-8f3", wantErr: ErrAmbiguous, errHas: ids[0] + ", " + ids[1]},
		{name: "unknown", id: "2025", wantErr: ErrNotFound, errHas: `snapshot "2025" not found; run "snapply history" to list snapshot IDs`},
		{name: "empty", id: "", errHas: "snapply history"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := db.Snapshot(tt.id)
			if tt.errHas != "" {
				if err == nil {
					t.Fatalf("Snapshot(%q) = %s, want an error", tt.id, s.Meta.ID)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("error = %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("error = %q, want it to contain %q", err, tt.errHas)
				}
				assertOneLine(t, err, db.Path())
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Meta.ID != tt.want {
				t.Errorf("Snapshot(%q) = %s, want %s", tt.id, s.Meta.ID, tt.want)
			}
		})
	}
}

func TestSnapshotLatestEmpty(t *testing.T) {
	db := openTest(t)
	_, err := db.Snapshot(Latest)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("Snapshot(latest) of an empty store: error = %v, want ErrNotFound", err)
	}
	metas, err := db.Snapshots()
	if err != nil || len(metas) != 0 {
		t.Errorf("Snapshots() = %v, %v; want none", metas, err)
	}
}

// TestSnapshotHistory writes snapshots that add, change and remove
// objects, enough to pass through keyframes and long delta chains, and
// checks every one reads back as written.
func TestSnapshotHistory(t *testing.T) {
	db := openTest(t)
	a := newApp(200)
	type written struct {
		id      string
		entries []Entry
	}
	var all []written
	for i := range 40 {
		switch {
		case i%7 == 3:
			a.objs = a.objs[:len(a.objs)-5] // objects deleted
		case i%7 == 5:
			for j := range 5 { // objects created
				a.objs = append(a.objs, a.gen(1000+10*i+j))
			}
		case i == 20:
			a.change(150) // most objects change: a keyframe is cheaper
		default:
			a.change(3)
		}
		objs := a.objs
		if i%9 == 8 {
			objs = objs[:50] // a snapshot of another scope, between the others
		}
		m := put(t, db, Before, objs)
		var es []Entry
		for _, u := range objs {
			es = append(es, Entry{Ref: object.RefOf(u), ID: ObjectID(db.Redactor(), u), ResourceVersion: u.GetResourceVersion()})
		}
		sortEntries(es)
		all = append(all, written{m.ID, es})
	}
	db = reopen(t, db, DefaultOptions())
	depths := map[uint64]int{}
	err := db.View(func(tx *Tx) error {
		for _, w := range all {
			s, err := tx.Snapshot(w.id)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(w.entries, s.Entries); diff != "" {
				t.Errorf("snapshot %s entries (-want +got):\n%s", w.id, diff)
			}
			_, rec, _ := tx.entries(w.id)
			depths[rec.depth]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("snapshots by chain depth: %v", depths)
	if depths[0] < 2 || len(depths) < 5 {
		t.Errorf("snapshots by chain depth: %v; want keyframes and deltas", depths)
	}
}
