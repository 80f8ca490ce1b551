package engine

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/store"
)

// The unit tests of this file run the record side of the known test
// (KnownObjects, Prepared.loadKnown) against a store in memory: no request
// goes to an API server.

const testServer = "v1.36.3"

var widgetGK = schema.GroupKind{Group: "example.com", Kind: "Widget"}

// desiredObject returns a desired object of apiVersion and kind named name
// in namespace ns, with fields set.
func desiredObject(apiVersion, kind, ns, name string, fields map[string]any) object.Object {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetName(name)
	if ns != "" {
		u.SetNamespace(ns)
	}
	for k, v := range fields {
		u.Object[k] = v
	}
	return object.Object{Ref: object.RefOf(u), Obj: u, Source: object.Source{File: name + ".yaml"}}
}

func configMap(name, value string) object.Object {
	return desiredObject("v1", "ConfigMap", "team", name, map[string]any{"data": map[string]any{"k": value}})
}

func widget(name string) object.Object {
	return desiredObject("example.com/v1", "Widget", "team", name, map[string]any{"spec": map[string]any{"size": int64(1)}})
}

func widgetCRD(version string) object.Object {
	return desiredObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com", map[string]any{"spec": map[string]any{
		"group": "example.com", "names": map[string]any{"kind": "Widget", "plural": "widgets"},
		"versions": []any{map[string]any{"name": version}},
	}})
}

// lastApply is the record of an apply of desired, as a run leaves it: the
// desired snapshot, the run with one applied record per object, and the
// inventory that names its after snapshot.
type lastApply struct {
	db      *memStore
	inv     *apply.Inventory
	desired []object.Object
	crds    CRDGenerations
}

func newLastApply(t *testing.T) *lastApply {
	t.Helper()
	l := &lastApply{
		db:      newMemStore(),
		inv:     &apply.Inventory{Name: "inv", Namespace: "team", Exists: true, Annotations: map[string]string{apply.LastSnapshotAnnotation: "after-1"}},
		desired: []object.Object{configMap("a", "1"), configMap("b", "1"), widgetCRD("v1"), widget("w")},
		crds:    CRDGenerations{widgetGK: 2},
	}
	objs := make([]*unstructured.Unstructured, len(l.desired))
	for i, d := range l.desired {
		objs[i] = d.Obj
	}
	meta, err := l.db.PutSnapshot(context.Background(), store.Meta{Kind: store.Desired}, objs)
	if err != nil {
		t.Fatal(err)
	}
	run := store.Run{Before: "before-1", Desired: meta.ID, After: "after-1", ServerVersion: testServer, Source: store.Source{RunID: "42"}}
	for _, d := range l.desired {
		r := store.Record{Ref: d.Ref, Action: "update", Outcome: string(apply.Applied), Fields: "sha256:" + d.Ref.Name}
		if d.Ref.GroupKind() == widgetGK {
			r.CRDGeneration = 2
		}
		run.Records = append(run.Records, r)
	}
	l.db.runs = append(l.db.runs, run)
	return l
}

// record returns the last run's record of the object named name.
func (l *lastApply) record(name string) *store.Record {
	run := &l.db.runs[len(l.db.runs)-1]
	for i := range run.Records {
		if run.Records[i].Ref.Name == name {
			return &run.Records[i]
		}
	}
	panic("no record of " + name)
}

// replace replaces the desired object named like d by d.
func (l *lastApply) replace(d object.Object) {
	for i := range l.desired {
		if l.desired[i].Ref.Key() == d.Ref.Key() {
			l.desired[i] = d
		}
	}
}

func names(k Known) []string {
	var out []string
	for key := range k.Fields {
		out = append(out, key.Name)
	}
	slices.Sort(out)
	return out
}

func TestKnownObjectsFromTheRecord(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*lastApply)
		// known names the candidates; line is a part of Known.Line.
		known   []string
		line    string
		missing bool
	}{
		{
			name:  "nothing changed",
			known: []string{"a", "b", "w", "widgets.example.com"},
			line:  "4 of 4 objects are candidates from the record of the last apply (run 42, after snapshot after-1)",
		},
		{
			name:   "a new inventory",
			change: func(l *lastApply) { l.inv.Exists = false },
			line:   "no earlier apply of this inventory",
		},
		{
			name:   "an inventory that names no after snapshot",
			change: func(l *lastApply) { delete(l.inv.Annotations, apply.LastSnapshotAnnotation) },
			line:   "no earlier apply of this inventory",
		},
		{
			name:    "a store without the record",
			change:  func(l *lastApply) { l.inv.Annotations[apply.LastSnapshotAnnotation] = "after-9" },
			line:    "the record of the last apply (after snapshot after-9) is not in mem.db",
			missing: true,
		},
		{
			name:    "a store that cannot be read",
			change:  func(l *lastApply) { l.db.fail["RunWithAfter"] = errBoom },
			line:    "the record of the last apply: boom",
			missing: true,
		},
		{
			name:   "an interrupted apply",
			change: func(l *lastApply) { l.db.runs[0].Interrupted = true },
			line:   "the last apply was interrupted",
		},
		{
			name:   "a record of an older snapply",
			change: func(l *lastApply) { l.db.runs[0].ServerVersion = "" },
			line:   "holds no managedFields (an older snapply wrote it)",
		},
		{
			name:   "another API server version",
			change: func(l *lastApply) { l.db.runs[0].ServerVersion = "v1.35.0" },
			line:   `the last apply ran against API server "v1.35.0", this is "v1.36.3"`,
		},
		{
			name:   "the desired snapshot is gone",
			change: func(l *lastApply) { l.db.fail["Snapshot"] = errBoom },
			line:   "the desired snapshot of the last apply: boom",
		},
		{
			name:   "an object that changed since",
			change: func(l *lastApply) { l.replace(configMap("a", "2")) },
			known:  []string{"b", "w", "widgets.example.com"},
			line:   "3 of 4 objects are candidates",
		},
		{
			name: "an object labelled for another inventory",
			change: func(l *lastApply) {
				a := configMap("a", "1")
				a.Obj.SetLabels(map[string]string{apply.PartOfLabel: "other"})
				l.replace(a)
			},
			known: []string{"b", "w", "widgets.example.com"},
		},
		{
			name:   "a new object",
			change: func(l *lastApply) { l.desired = append(l.desired, configMap("c", "1")) },
			known:  []string{"a", "b", "w", "widgets.example.com"},
			line:   "4 of 5 objects are candidates",
		},
		{
			name:   "an object the last apply failed",
			change: func(l *lastApply) { l.record("a").Outcome = string(apply.Failed) },
			known:  []string{"b", "w", "widgets.example.com"},
		},
		{
			name:   "an object the last apply did not attempt",
			change: func(l *lastApply) { l.record("a").Outcome = string(apply.NotAttempted) },
			known:  []string{"b", "w", "widgets.example.com"},
		},
		{
			name:   "an object the last apply found unchanged",
			change: func(l *lastApply) { l.record("a").Outcome = string(apply.Unchanged) },
			known:  []string{"a", "b", "w", "widgets.example.com"},
		},
		{
			name:   "a record without a managedFields digest",
			change: func(l *lastApply) { l.record("b").Fields = "" },
			known:  []string{"a", "w", "widgets.example.com"},
		},
		{
			name:   "a CRD whose generation moved",
			change: func(l *lastApply) { l.crds[widgetGK] = 3 },
			known:  []string{"a", "b", "widgets.example.com"},
		},
		{
			name:   "a custom resource whose CRD is gone",
			change: func(l *lastApply) { delete(l.crds, widgetGK) },
			known:  []string{"a", "b", "widgets.example.com"},
		},
		{
			// Core kinds are told apart from custom ones by their group;
			// the CRD itself is in a group with a dot.
			name:   "CRDs that cannot be listed",
			change: func(l *lastApply) { l.crds = nil },
			known:  []string{"a", "b"},
		},
		{
			name:   "a CRD of the set that changes",
			change: func(l *lastApply) { l.replace(widgetCRD("v2")) },
			known:  []string{"a", "b"},
			line:   "2 of 4 objects are candidates",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLastApply(t)
			if tc.change != nil {
				tc.change(l)
			}
			k := KnownObjects(l.db, l.inv, l.desired, testServer, l.crds)
			if d := cmp.Diff(tc.known, names(k)); d != "" {
				t.Errorf("candidates (-want +got):\n%s", d)
			}
			if !strings.Contains(k.Line, tc.line) {
				t.Errorf("line %q, want it to contain %q", k.Line, tc.line)
			}
			if k.missing != tc.missing {
				t.Errorf("missing %v, want %v", k.missing, tc.missing)
			}
			for key, fields := range k.Fields {
				rec := k.Records[key]
				if rec.Ref.Key() != key || rec.Fields != fields || fields != "sha256:"+key.Name {
					t.Errorf("%s: fields %q and record %+v, want the last apply's", key, fields, rec)
				}
			}
			if len(k.Records) != len(k.Fields) {
				t.Errorf("%d records for %d candidates", len(k.Records), len(k.Fields))
			}
		})
	}
}

// prepared returns a Prepared holding the run's store db, with the
// desired objects and inventory of l, as planning finds them once the
// cluster was read.
func (l *lastApply) prepared(e *Engine, db Store) *Prepared {
	return &Prepared{
		engine:    e,
		Store:     db,
		Client:    &kube.Client{GitVersion: testServer},
		Inventory: l.inv,
		Desired:   l.desired,
		crds:      l.crds,
	}
}

// The run's own store is asked first; Engine.Records only when it does not
// hold the last apply.
func TestLoadKnownFromTheRunsStore(t *testing.T) {
	l := newLastApply(t)
	e := &Engine{Records: func(context.Context, *apply.Inventory) (string, string) {
		t.Error("Records was asked, though the run's store holds the last apply")
		return "", ""
	}}
	p := l.prepared(e, l.db)
	k := p.loadKnown(context.Background())
	if len(k.Fields) != 4 || p.records != nil {
		t.Errorf("known %v, records %v; want 4 candidates from the run's store", names(k), p.records)
	}
}

// Without Engine.Records, a store without the last apply means no
// candidates, and says why.
func TestLoadKnownWithoutRecords(t *testing.T) {
	l := newLastApply(t)
	p := l.prepared(&Engine{}, newMemStore())
	k := p.loadKnown(context.Background())
	if len(k.Fields) != 0 || !strings.Contains(k.Line, "is not in mem.db") {
		t.Errorf("known %v, line %q; want none, and why", names(k), k.Line)
	}
}

// When Engine.Records finds no store of the last apply, its line says why
// every object is dry-run; when the store it names cannot be opened, the
// line says so.
func TestLoadKnownRecordsFindsNone(t *testing.T) {
	for _, tc := range []struct {
		name, path, why, line string
	}{
		{name: "no artifact", why: "no store artifact of run 42", line: "no store artifact of run 42"},
		{name: "a missing file", path: filepath.Join(t.TempDir(), "gone.db"), why: "the store of run 42", line: "the store of the last apply: store: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLastApply(t)
			var asked *apply.Inventory
			e := &Engine{Getenv: func(string) string { return "" }, Records: func(_ context.Context, inv *apply.Inventory) (string, string) {
				asked = inv
				return tc.path, tc.why
			}}
			p := l.prepared(e, newMemStore())
			k := p.loadKnown(context.Background())
			if asked != l.inv {
				t.Errorf("Records asked about %v, want the inventory", asked)
			}
			if len(k.Fields) != 0 || !strings.Contains(k.Line, tc.line) {
				t.Errorf("known %v, line %q; want none, and a line with %q", names(k), k.Line, tc.line)
			}
			if p.records != nil {
				t.Errorf("records %v, want none", p.records)
			}
		})
	}
}

// The store of the last apply that Engine.Records finds is a store file:
// the known test reads it, and Close closes it.
func TestLoadKnownFromTheLastApplysStore(t *testing.T) {
	l := newLastApply(t)
	path := filepath.Join(t.TempDir(), "last.db")
	writeLastApply(t, path, l)
	var progress []string
	e := &Engine{
		Getenv: func(string) string { return "" },
		Records: func(context.Context, *apply.Inventory) (string, string) {
			return path, "the store of run 42 (artifact)"
		},
		Progress: func(ev Event) { progress = append(progress, ev.Message) },
	}
	own := newMemStore()
	p := l.prepared(e, own)
	k := p.loadKnown(context.Background())
	if d := cmp.Diff([]string{"a", "b", "w", "widgets.example.com"}, names(k)); d != "" {
		t.Errorf("candidates (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"the store of run 42 (artifact)"}, progress); d != "" {
		t.Errorf("progress (-want +got):\n%s", d)
	}
	if p.records == nil {
		t.Fatal("the store of the last apply is not kept for Close")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if own.closed != 1 {
		t.Errorf("the run's store closed %d times, want 1", own.closed)
	}
	// Closed: the file opens for writing again.
	db, err := store.Open(path, store.DefaultOptions())
	if err != nil {
		t.Fatalf("the store of the last apply is still open: %v", err)
	}
	_ = db.Close()
}

// writeLastApply writes the record of l's last apply into a store file at
// path, as a run writes it.
func writeLastApply(t *testing.T, path string, l *lastApply) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(path, store.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	objs := make([]*unstructured.Unstructured, len(l.desired))
	for i, d := range l.desired {
		objs[i] = d.Obj
	}
	desired, err := db.PutSnapshot(ctx, store.Meta{Kind: store.Desired}, objs)
	if err != nil {
		t.Fatal(err)
	}
	after, err := db.PutSnapshot(ctx, store.Meta{Kind: store.After}, objs)
	if err != nil {
		t.Fatal(err)
	}
	run := l.db.runs[0]
	run.Before, run.Desired, run.After = desired.ID, desired.ID, after.ID
	if err := db.PutRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	l.inv.Annotations[apply.LastSnapshotAnnotation] = after.ID
}
