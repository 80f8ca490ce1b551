package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/snapshot"
	"github.com/snapply/snapply/internal/store"
	"github.com/snapply/snapply/internal/version"
)

// The unit tests of this file run the record step (what Prepared.Deploy
// writes into the store once the apply is over) and Prepared.Close against
// a store and a lock in memory. The apply itself, and the after snapshot
// it reads from the cluster, are tested against the API server.

// recording returns a Prepared after its before snapshot, writing into a
// store in memory, and the progress lines it reports.
func recording() (*Prepared, *memStore, *[]string) {
	db := newMemStore()
	var progress []string
	e := &Engine{
		Source:   store.Source{Commit: "5d1b9e2c", RunID: "42"},
		Progress: func(ev Event) { progress = append(progress, string(ev.Stage)+": "+ev.Message) },
	}
	p := &Prepared{
		engine:   e,
		Store:    db,
		Before:   store.Meta{ID: "before-1", Cluster: store.Cluster{Server: "sha256:server", Context: "kind"}, Source: e.Source},
		scope:    snapshot.ScopeNamespaces,
		restores: "snap-0",
	}
	return p, db, &progress
}

func recordedRun() store.Run {
	return store.Run{Before: "before-1", Desired: "desired-1", Source: store.Source{Commit: "5d1b9e2c"}, Records: []store.Record{
		{Ref: configMap("a", "1").Ref, Action: "update", Outcome: "applied", Fields: "sha256:a"},
	}}
}

// After the apply, the after snapshot of the managed objects goes into the
// store, then the run's record naming it.
func TestRecordWithAfter(t *testing.T) {
	p, db, progress := recording()
	objs := []*unstructured.Unstructured{configMap("a", "1").Obj}
	meta, err := p.recordWithAfter(context.Background(), recordedRun(), objs)
	if err != nil {
		t.Fatal(err)
	}
	after := db.snapshots[meta.ID]
	if after == nil {
		t.Fatalf("no after snapshot %q in the store", meta.ID)
	}
	want := store.Meta{
		ID: meta.ID, Kind: store.After, Count: 1, Scope: string(snapshot.ScopeManaged), ToolVersion: version.Version,
		Cluster: p.Before.Cluster, Source: store.Source{Commit: "5d1b9e2c", RunID: "42", Restores: "snap-0"},
	}
	if d := cmp.Diff(want, after.Meta); d != "" {
		t.Errorf("after snapshot (-want +got):\n%s", d)
	}
	wantRun := recordedRun()
	wantRun.After = meta.ID
	if d := cmp.Diff([]store.Run{wantRun}, db.runs); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"record: recorded the outcome in mem.db: snapshots before-1 (before), " + meta.ID + " (after)"}, *progress); d != "" {
		t.Errorf("progress (-want +got):\n%s", d)
	}
}

// The outcome of every object is recorded also when the after snapshot
// cannot be: the run goes into the store without one, and the error says
// why there is none.
func TestRecordWithoutAfter(t *testing.T) {
	errRecord := errors.New("put run: disk full")
	for _, tc := range []struct {
		name string
		// fail maps the store's methods to their errors.
		fail map[string]error
		// capture is the error of the after snapshot's LIST, if any.
		capture error
		wantErr []error
		runs    int
		after   bool
		line    string
	}{
		{name: "the cluster cannot be read back", capture: errBoom, wantErr: []error{errBoom}, runs: 1,
			line: "record: recorded the outcome in mem.db without an after snapshot: snapshot before-1 (before)"},
		{name: "the after snapshot cannot be written", fail: map[string]error{"PutSnapshot": errBoom}, wantErr: []error{errBoom}, runs: 1,
			line: "record: recorded the outcome in mem.db without an after snapshot: snapshot before-1 (before)"},
		{name: "nothing can be written", fail: map[string]error{"PutSnapshot": errBoom, "PutRun": errRecord}, wantErr: []error{errBoom, errRecord}},
		{name: "the run cannot be written", fail: map[string]error{"PutRun": errRecord}, wantErr: []error{errRecord}, after: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, db, progress := recording()
			for m, err := range tc.fail {
				db.fail[m] = err
			}
			var meta store.Meta
			var err error
			if tc.capture != nil {
				meta, err = p.recordWithoutAfter(context.Background(), recordedRun(), tc.capture)
			} else {
				meta, err = p.recordWithAfter(context.Background(), recordedRun(), []*unstructured.Unstructured{configMap("a", "1").Obj})
			}
			for _, want := range tc.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("error %v, want it to be %v", err, want)
				}
			}
			if (meta.ID != "") != tc.after {
				t.Errorf("after snapshot %q, want one: %v", meta.ID, tc.after)
			}
			if len(db.runs) != tc.runs {
				t.Fatalf("%d runs recorded, want %d", len(db.runs), tc.runs)
			}
			if tc.runs == 1 {
				if d := cmp.Diff(recordedRun(), db.runs[0]); d != "" {
					t.Errorf("run (-want +got), want it without an after snapshot:\n%s", d)
				}
			}
			var lines []string
			if tc.line != "" {
				lines = []string{tc.line}
			}
			if d := cmp.Diff(lines, *progress); d != "" {
				t.Errorf("progress (-want +got):\n%s", d)
			}
		})
	}
}

// The run's record holds, per object, what the next known test compares:
// the managedFields digest, and for a custom resource the generation of
// its CRD it was applied or checked against.
func TestRunRecord(t *testing.T) {
	p, _, _ := recording()
	p.Client = &kube.Client{GitVersion: testServer}
	p.crds = CRDGenerations{widgetGK: 9}
	p.known = Known{Records: map[object.Key]store.Record{widget("known").Ref.Key(): {CRDGeneration: 7}}}
	type obj struct {
		ref      string
		action   plan.Action
		verified plan.Verification
		outcome  apply.Outcome
		fields   string
		wantGen  int64
	}
	objs := []obj{
		{ref: "a", action: plan.Update, verified: plan.VerifiedDryRun, outcome: apply.Applied, fields: "sha256:a"},
		{ref: "b", action: plan.Update, verified: plan.VerifiedDryRun, outcome: apply.Failed},
		{ref: "known", action: plan.Unchanged, verified: plan.VerifiedRecord, outcome: apply.Unchanged, fields: "sha256:known", wantGen: 7},
		{ref: "checked", action: plan.Unchanged, verified: plan.VerifiedDryRun, outcome: apply.Unchanged, fields: "sha256:checked", wantGen: 9},
		{ref: "failed", action: plan.Create, verified: plan.VerifiedDryRun, outcome: apply.Failed},
	}
	res := &apply.Result{Plan: &plan.Plan{}, Interrupted: true, Duration: 3 * time.Second}
	var want []store.Record
	for _, o := range objs {
		d := configMap(o.ref, "1")
		if o.ref != "a" && o.ref != "b" {
			d = widget(o.ref)
		}
		res.Plan.Changes = append(res.Plan.Changes, plan.Change{Ref: d.Ref, Action: o.action, Verified: o.verified})
		r := apply.Record{Ref: d.Ref, Action: o.action, Outcome: o.outcome, Fields: o.fields}
		res.Records = append(res.Records, r)
		sr := r.StoreRecord()
		sr.CRDGeneration = o.wantGen
		want = append(want, sr)
	}
	run := p.run(context.Background(), res, store.Meta{ID: "desired-1"})
	wantRun := store.Run{
		Before: "before-1", Desired: "desired-1", Source: p.Before.Source, Interrupted: true,
		Duration: 3 * time.Second, ServerVersion: testServer, Records: want,
	}
	if d := cmp.Diff(wantRun, run); d != "" {
		t.Errorf("run (-want +got):\n%s", d)
	}
}

// Close releases the lock and closes both stores, also when one of them
// fails, and reports every failure.
func TestCloseReleasesEverything(t *testing.T) {
	own, last := newMemStore(), newMemStore()
	own.fail["Close"] = errBoom
	lock := &memLock{err: errors.New("lock team/snapply-inv: release: unreachable")}
	p := &Prepared{Store: own, records: last, lock: lock}
	err := p.Close()
	if lock.released != 1 || own.closed != 1 || last.closed != 1 {
		t.Errorf("released %d, closed %d and %d; want each once", lock.released, own.closed, last.closed)
	}
	if !errors.Is(err, errBoom) || !strings.Contains(err.Error(), "release: unreachable") {
		t.Errorf("error %v, want both failures", err)
	}
	if err := (&Prepared{}).Close(); err != nil {
		t.Errorf("close of an empty Prepared: %v", err)
	}
}
