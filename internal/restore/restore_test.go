package restore_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/restore"
	"github.com/snapply/snapply/internal/store"
)

const password = "v1-password-restore-test"

// desiredCM is a ConfigMap as a run applied it.
func desiredCM(name, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "prod", "labels": map[string]any{"applyset.kubernetes.io/part-of": "applyset-x"}},
		"data":     map[string]any{"k": value},
	}}
}

// liveCM is the ConfigMap live after snapply applied it, with a field
// another manager owns.
func liveCM(name, value string) *unstructured.Unstructured {
	u := desiredCM(name, value)
	md := u.Object["metadata"].(map[string]any)
	md["annotations"] = map[string]any{"edited-by": "someone"}
	md["uid"] = "uid-" + name
	md["resourceVersion"] = "7"
	md["managedFields"] = []any{
		map[string]any{"manager": "snapply", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{
			"f:data":     map[string]any{"f:k": map[string]any{}},
			"f:metadata": map[string]any{"f:labels": map[string]any{"f:applyset.kubernetes.io/part-of": map[string]any{}}},
		}},
		map[string]any{"manager": "kubectl-annotate", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{
			"f:metadata": map[string]any{"f:annotations": map[string]any{"f:edited-by": map[string]any{}}},
		}},
	}
	return u
}

func desiredSecret() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "s", "namespace": "prod", "labels": map[string]any{"applyset.kubernetes.io/part-of": "applyset-x"}},
		"stringData": map[string]any{"pw": password},
	}}
}

func liveSecret() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{
			"name": "s", "namespace": "prod", "labels": map[string]any{"applyset.kubernetes.io/part-of": "applyset-x"},
			"managedFields": []any{map[string]any{"manager": "snapply", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{
				"f:stringData": map[string]any{"f:pw": map[string]any{}},
				"f:metadata":   map[string]any{"f:labels": map[string]any{"f:applyset.kubernetes.io/part-of": map[string]any{}}},
			}}},
		},
		"data": map[string]any{"pw": base64.StdEncoding.EncodeToString([]byte(password))},
	}}
}

// history is a store with two recorded runs and a plan's snapshot:
// run 1 creates ConfigMaps a and b and Secret s; run 2 changes a, prunes b
// and creates c.
type history struct {
	path       string
	run1, run2 store.Run
	plan       store.Meta
}

func newHistory(t *testing.T, key []byte) history {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	opts := store.DefaultOptions()
	opts.SealKey = key
	db, err := store.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	snap := func(kind store.Kind, objs ...*unstructured.Unstructured) string {
		t.Helper()
		at = at.Add(time.Minute)
		m, err := db.PutSnapshot(ctx, store.Meta{Kind: kind, Created: at}, objs)
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	run := func(before, desired, after string, actions map[string]string) store.Run {
		t.Helper()
		at = at.Add(time.Minute)
		r := store.Run{Before: before, Desired: desired, After: after, Created: at}
		for _, name := range []string{"a", "b", "c", "s"} {
			if a, ok := actions[name]; ok {
				kind := "ConfigMap"
				if name == "s" {
					kind = "Secret"
				}
				r.Records = append(r.Records, store.Record{Ref: object.Ref{Version: "v1", Kind: kind, Namespace: "prod", Name: name}, Action: a})
			}
		}
		if err := db.PutRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		runs, err := db.Runs()
		if err != nil {
			t.Fatal(err)
		}
		return runs[len(runs)-1]
	}
	var h history
	h.path = path
	h.run1 = run(snap(store.Before),
		snap(store.Desired, desiredCM("a", "1"), desiredCM("b", "2"), desiredSecret()),
		snap(store.After, liveCM("a", "1"), liveCM("b", "2"), liveSecret()),
		map[string]string{"a": "create", "b": "create", "s": "create"})
	h.run2 = run(snap(store.Before, liveCM("a", "1"), liveCM("b", "2"), liveSecret()),
		snap(store.Desired, desiredCM("a", "10"), desiredCM("c", "3"), desiredSecret()),
		snap(store.After, liveCM("a", "10"), liveCM("c", "3"), liveSecret()),
		map[string]string{"a": "update", "b": "delete", "c": "create", "s": "unchanged"})
	h.plan, err = db.PutSnapshot(ctx, store.Meta{Kind: store.Before, Created: at.Add(time.Minute)}, []*unstructured.Unstructured{liveCM("a", "10")})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h history) open(t *testing.T, key []byte) *store.DB {
	t.Helper()
	opts := store.DefaultOptions()
	opts.ReadOnly, opts.SealKey = true, key
	db, err := store.Open(h.path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// restored is what a test compares of a Set.
type restored struct {
	Restores string
	Run      string
	Objects  map[string]map[string]any // ref -> object
	Sources  []string
	Kept     []string
}

func summarize(s *restore.Set) restored {
	r := restored{Restores: s.Restores, Run: s.Run.Before, Objects: map[string]map[string]any{}}
	for _, o := range s.Objects {
		if o.Ref != object.RefOf(o.Obj) {
			r.Objects["ref mismatch "+o.Ref.String()] = nil
		}
		r.Objects[o.Ref.String()] = o.Obj.Object
		if !contains(r.Sources, o.Source.String()) {
			r.Sources = append(r.Sources, o.Source.String())
		}
	}
	for _, k := range s.Kept {
		r.Kept = append(r.Kept, k.String())
	}
	return r
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// owned is what snapply owned of a live ConfigMap: data and the label.
func owned(name, value string) map[string]any {
	return desiredCM(name, value).Object
}

func TestFromRun(t *testing.T) {
	key := bytes.Repeat([]byte{9}, 32)
	sealed := newHistory(t, key)
	unsealed := newHistory(t, nil)
	clearSecret := desiredSecret().Object
	liveClear := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "s", "namespace": "prod", "labels": map[string]any{"applyset.kubernetes.io/part-of": "applyset-x"}},
		"data":     map[string]any{"pw": base64.StdEncoding.EncodeToString([]byte(password))},
	}

	tests := []struct {
		name  string
		h     history
		key   []byte
		id    func(h history) string
		state restore.State
		want  func(h history) restored
	}{
		{
			name: "desired state of run 1 by its desired snapshot, Secret unsealed",
			h:    sealed, key: key, state: restore.StateDesired,
			id: func(h history) string { return h.run1.Desired },
			want: func(h history) restored {
				return restored{Restores: h.run1.Desired, Run: h.run1.Before, Sources: []string{"snapshot " + h.run1.Desired},
					Objects: map[string]map[string]any{"configmap/a -n prod": owned("a", "1"), "configmap/b -n prod": owned("b", "2"), "secret/s -n prod": clearSecret}}
			},
		},
		{
			name: "run 1 by a prefix of its after snapshot, without sealed values: the Secret is kept",
			h:    unsealed, state: restore.StateDesired,
			id: func(h history) string { return h.run1.After[:len(h.run1.After)-2] },
			want: func(h history) restored {
				return restored{Restores: h.run1.Desired, Run: h.run1.Before, Sources: []string{"snapshot " + h.run1.Desired},
					Objects: map[string]map[string]any{"configmap/a -n prod": owned("a", "1"), "configmap/b -n prod": owned("b", "2")},
					Kept:    []string{"secret/s -n prod"}}
			},
		},
		{
			name: "before state of the latest run: a's old value, b back, c left out, other managers' fields left out",
			h:    sealed, key: key, state: restore.StateBefore,
			id: func(history) string { return "latest" },
			want: func(h history) restored {
				return restored{Restores: h.run2.Before, Run: h.run2.Before, Sources: []string{"snapshot " + h.run2.Before},
					Objects: map[string]map[string]any{"configmap/a -n prod": owned("a", "1"), "configmap/b -n prod": owned("b", "2"), "secret/s -n prod": liveClear}}
			},
		},
		{
			name: "before state without sealed values",
			h:    unsealed, state: restore.StateBefore,
			id: func(h history) string { return h.run2.Desired },
			want: func(h history) restored {
				return restored{Restores: h.run2.Before, Run: h.run2.Before, Sources: []string{"snapshot " + h.run2.Before},
					Objects: map[string]map[string]any{"configmap/a -n prod": owned("a", "1"), "configmap/b -n prod": owned("b", "2")},
					Kept:    []string{"secret/s -n prod"}}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := tt.h.open(t, tt.key)
			set, err := restore.FromRun(db, tt.id(tt.h), tt.state)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want(tt.h), summarize(set)); diff != "" {
				t.Errorf("FromRun() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromRunErrors(t *testing.T) {
	key := bytes.Repeat([]byte{9}, 32)
	h := newHistory(t, key)
	empty := filepath.Join(t.TempDir(), "empty.db")
	db, err := store.Open(empty, store.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutSnapshot(context.Background(), store.Meta{Kind: store.Before}, nil); err != nil {
		t.Fatal(err)
	}
	db.Close()

	tests := []struct {
		name    string
		path    string
		key     []byte
		id      string
		state   restore.State
		wantIs  error
		wantMsg string
	}{
		{name: "a plan's snapshot", path: h.path, key: key, id: h.plan.ID, state: restore.StateDesired, wantMsg: "snapshot " + h.plan.ID + " (before) belongs to no recorded run"},
		{name: "an unknown snapshot", path: h.path, key: key, id: "19990101", state: restore.StateDesired, wantIs: store.ErrNotFound},
		{name: "an unknown state", path: h.path, key: key, id: "latest", state: "after", wantMsg: `unknown state "after": want desired or before`},
		{name: "sealed values without the key", path: h.path, id: "latest", state: restore.StateDesired, wantIs: store.ErrNoKey},
		{name: "sealed values with another key", path: h.path, key: bytes.Repeat([]byte{1}, 32), id: "latest", state: restore.StateBefore, wantIs: store.ErrWrongKey, wantMsg: "sealed values of secret/s -n prod: wrong SNAPPLY_STORE_KEY"},
		{name: "no run", path: empty, id: "latest", state: restore.StateDesired, wantMsg: "no recorded run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := store.DefaultOptions()
			opts.ReadOnly, opts.SealKey = true, tt.key
			db, err := store.Open(tt.path, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			_, err = restore.FromRun(db, tt.id, tt.state)
			if err == nil {
				t.Fatal("FromRun() succeeded, want an error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("FromRun() error = %v, want %v", err, tt.wantIs)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("FromRun() error = %q, want it to contain %q", err, tt.wantMsg)
			}
		})
	}
}
