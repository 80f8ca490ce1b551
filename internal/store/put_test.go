package store

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// counts returns the number of keys in each bucket.
func counts(t *testing.T, db *DB) map[string]int {
	t.Helper()
	n := map[string]int{}
	err := db.bolt.View(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			n[string(b)] = tx.Bucket(b).Stats().KeyN
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPutSnapshotStoresObjectsOnce(t *testing.T) {
	db := openTest(t)
	a := newApp(100)
	put(t, db, Before, a.objs)
	after1 := counts(t, db)
	if after1["objects"] != 100 {
		t.Errorf("objects bucket holds %d objects after one snapshot of 100, want 100", after1["objects"])
	}

	// The same objects again, with new resourceVersions only: no new
	// object.
	again := make([]*unstructured.Unstructured, len(a.objs))
	for i, u := range a.objs {
		again[i] = u.DeepCopy()
		again[i].SetResourceVersion("999999")
	}
	put(t, db, After, again)
	if got := counts(t, db)["objects"]; got != 100 {
		t.Errorf("objects bucket holds %d objects after a second snapshot of the same objects, want 100", got)
	}

	// Three changed objects: three new ones.
	a.change(3)
	put(t, db, After, a.objs)
	if got := counts(t, db)["objects"]; got != 103 {
		t.Errorf("objects bucket holds %d objects after 3 changed, want 103", got)
	}

	// Equal objects within one snapshot: stored once.
	cm := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}}}
	}
	before := counts(t, db)["objects"]
	put(t, db, Desired, []*unstructured.Unstructured{cm("x"), cm("y")})
	if got := counts(t, db)["objects"] - before; got != 2 {
		t.Errorf("%d new objects for two distinct ConfigMaps, want 2", got)
	}
}

func TestPutSnapshotErrors(t *testing.T) {
	cm := func(ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}}}
		if ns != "" {
			u.SetNamespace(ns)
		}
		return u
	}
	nan := cm("a", "nan")
	nan.Object["data"] = map[string]any{"x": math.NaN()}
	tests := []struct {
		name   string
		meta   Meta
		objs   []*unstructured.Unstructured
		errHas string
	}{
		{"unknown kind", Meta{Kind: "later"}, nil, `snapshot kind "later": want "before", "desired" or "after"`},
		{"no kind", Meta{}, nil, `snapshot kind ""`},
		{"listed twice", Meta{Kind: Before}, []*unstructured.Unstructured{cm("a", "x"), cm("b", "x"), cm("a", "x")}, "configmap/x -n a is listed twice"},
		{"nil object", Meta{Kind: Before}, []*unstructured.Unstructured{cm("a", "x"), nil}, "object 1 is nil"},
		{"no name", Meta{Kind: Before}, []*unstructured.Unstructured{cm("a", "")}, "has no kind or no name"},
		{"not JSON", Meta{Kind: Before}, []*unstructured.Unstructured{nan}, "configmap/nan -n a: json: unsupported value: NaN"},
		{"bad ID", Meta{Kind: Before, ID: "has space"}, nil, `snapshot ID "has space"`},
		{"latest is no ID", Meta{Kind: Before, ID: Latest}, nil, `snapshot ID "latest"`},
	}
	db := openTest(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.PutSnapshot(t.Context(), tt.meta, tt.objs)
			if err == nil {
				t.Fatal("PutSnapshot() succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("error = %q, want it to contain %q", err, tt.errHas)
			}
			assertOneLine(t, err, db.Path())
		})
	}
	if n := counts(t, db); n["objects"] != 0 || n["snapshots"] != 0 || n["blobs"] != 0 {
		t.Errorf("failed PutSnapshot calls left %v", n)
	}

	m := put(t, db, Before, []*unstructured.Unstructured{cm("a", "x")})
	if _, err := db.PutSnapshot(t.Context(), Meta{Kind: Before, ID: m.ID}, nil); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("PutSnapshot with a used ID: error = %v, want already exists", err)
	}
}

// cancelAfter is a context whose Err starts failing after n calls: it
// cancels a PutSnapshot at a chosen point of its work.
type cancelAfter struct {
	context.Context
	n atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestPutSnapshotCancelledWritesNothing(t *testing.T) {
	db := openTest(t)
	a := newApp(50)
	put(t, db, Before, a.objs)
	db = reopen(t, db, DefaultOptions())
	want := counts(t, db)
	wantBytes, _ := os.ReadFile(db.Path())
	a.change(20)
	for _, n := range []int64{0, 1, 25, 50, 60} {
		ctx := &cancelAfter{Context: t.Context()}
		ctx.n.Store(n)
		_, err := db.PutSnapshot(ctx, Meta{Kind: Before}, append(a.objs, newApp(60).objs[50:]...))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("PutSnapshot cancelled after %d checks: error = %v, want context.Canceled", n, err)
		}
		if got := counts(t, db); got["objects"] != want["objects"] || got["snapshots"] != want["snapshots"] || got["blobs"] != want["blobs"] {
			t.Errorf("PutSnapshot cancelled after %d checks left %v, want %v", n, got, want)
		}
	}
	db = reopen(t, db, DefaultOptions())
	if got := counts(t, db); got["objects"] != want["objects"] || got["snapshots"] != want["snapshots"] {
		t.Errorf("after reopening: %v, want %v", got, want)
	}
	if gotBytes, _ := os.ReadFile(db.Path()); len(gotBytes) != len(wantBytes) {
		t.Errorf("cancelled snapshots changed the file size from %d to %d", len(wantBytes), len(gotBytes))
	}
	metas, err := db.Snapshots()
	if err != nil || len(metas) != 1 {
		t.Errorf("Snapshots() = %d, %v; want the one written before", len(metas), err)
	}
}
