package plan

import (
	"context"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/object"
)

// fakeCluster answers the planner's three questions from tables, and
// counts the dry runs: classification logic that needs no API server.
// (What the server answers is tested against a real one in plan_test.go.)
type fakeCluster struct {
	mu      sync.Mutex
	served  map[schema.GroupKind]bool             // kinds it serves (all namespaced but Namespace)
	errs    map[string]error                      // dry-run error by object name
	result  map[string]*unstructured.Unstructured // dry-run result by name; default: the object itself
	live    map[string]*unstructured.Unstructured // GET by name
	dryRuns map[string]int
}

func (f *fakeCluster) Scope(gvk schema.GroupVersionKind) (bool, bool, error) {
	return f.served[gvk.GroupKind()], gvk.Kind != "Namespace", nil
}

func (f *fakeCluster) DryRunApply(_ context.Context, obj *unstructured.Unstructured, force bool) (*unstructured.Unstructured, []string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dryRuns[obj.GetName()]++
	if err := f.errs[obj.GetName()]; err != nil && !(force && apierrors.IsConflict(err)) {
		return nil, nil, err
	}
	if r := f.result[obj.GetName()]; r != nil {
		return r.DeepCopy(), nil, nil
	}
	return obj.DeepCopy(), nil, nil
}

func (f *fakeCluster) Get(_ context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if u := f.live[obj.GetName()]; u != nil {
		return u.DeepCopy(), nil
	}
	return nil, nil
}

func cm(name string, data map[string]any) object.Object {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "app"},
		"data":     data,
	}}
	return object.Object{Ref: object.RefOf(u), Obj: u, Source: object.Source{File: "app.yaml", Line: 1}}
}

func obj(apiVersion, kind, ns, name string, fields map[string]any) object.Object {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}}
	if ns != "" {
		u.SetNamespace(ns)
	}
	for k, v := range fields {
		u.Object[k] = v
	}
	return object.Object{Ref: object.RefOf(u), Obj: u, Source: object.Source{File: "x.yaml", Line: 1}}
}

func TestClassifyWithoutAServer(t *testing.T) {
	live := func(o object.Object, rv string) *unstructured.Unstructured {
		u := o.Obj.DeepCopy()
		u.SetResourceVersion(rv)
		return u
	}
	created := cm("created", map[string]any{"k": "v"})
	same := cm("same", map[string]any{"k": "v"})
	changed := cm("changed", map[string]any{"k": "new"})
	known := cm("known", map[string]any{"k": "v"})
	knownMoved := cm("known-moved", map[string]any{"k": "v"})
	conflict := cm("conflict", map[string]any{"k": "v"})
	invalid := cm("invalid", map[string]any{"k": "v"})
	unknownKind := obj("example.com/v1", "Widget", "app", "w", nil)
	pendingCR := obj("stable.example.com/v1", "CronTab", "app", "ct", nil)
	crd := obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "crontabs.stable.example.com", map[string]any{
		"spec": map[string]any{"group": "stable.example.com", "names": map[string]any{"kind": "CronTab"}},
	})
	newNS := obj("v1", "Namespace", "", "fresh", nil)
	inNewNS := obj("v1", "ConfigMap", "fresh", "c", nil)

	conflictErr := apierrors.NewApplyConflict([]metav1.StatusCause{{
		Type: metav1.CauseTypeFieldManagerConflict, Field: ".data.k", Message: `conflict with "kubectl-edit" using v1`,
	}}, "Apply failed with 1 conflict")
	invalidErr := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "invalid", nil)

	liveChanged := changed.Obj.DeepCopy()
	liveChanged.Object["data"] = map[string]any{"k": "old"}
	liveChanged.SetResourceVersion("7")
	f := &fakeCluster{
		served: map[schema.GroupKind]bool{
			{Kind: "ConfigMap"}: true, {Kind: "Namespace"}: true,
			{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: true,
		},
		errs:    map[string]error{"conflict": conflictErr, "invalid": invalidErr},
		result:  map[string]*unstructured.Unstructured{},
		live:    map[string]*unstructured.Unstructured{},
		dryRuns: map[string]int{},
	}
	liveIdx := map[object.Key]*unstructured.Unstructured{
		same.Ref.Key():     live(same, "3"),
		changed.Ref.Key():  liveChanged,
		conflict.Ref.Key(): live(conflict, "2"),
	}
	f.result["same"] = live(same, "3")
	// known's live object carries snapply's entry as the record has it;
	// known-moved's lost .data.k to kubectl-edit since.
	owned := func(u *unstructured.Unstructured, fields string) *unstructured.Unstructured {
		u.Object["metadata"].(map[string]any)["managedFields"] = []any{
			map[string]any{"manager": "snapply", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "time": "2026-01-01T00:00:00Z",
				"fieldsV1": map[string]any{"f:data": map[string]any{fields: map[string]any{}}}},
		}
		return u
	}
	recorded := AppliedFields(owned(live(known, "5"), "f:k"))
	liveIdx[known.Ref.Key()] = owned(live(known, "6"), "f:k") // a status write moved it
	liveIdx[knownMoved.Ref.Key()] = owned(live(knownMoved, "9"), "f:other")
	desired := []object.Object{created, same, changed, known, knownMoved, conflict, invalid, unknownKind, pendingCR, crd, newNS, inNewNS}
	in := Input{Desired: desired, Live: liveIdx, Known: map[object.Key]string{known.Ref.Key(): recorded, knownMoved.Ref.Key(): recorded}}
	p, err := Compute(context.Background(), f, in, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Action{}
	for _, c := range p.Changes {
		got[c.Ref.Name] = c.Action
	}
	want := map[string]Action{
		"created": Create, "same": Unchanged, "changed": Update, "known": Unchanged, "known-moved": Unchanged,
		"conflict": Conflict, "invalid": Invalid, "w": Invalid, "ct": Pending,
		"crontabs.stable.example.com": Create, "fresh": Create, "c": Pending,
	}
	for name, a := range want {
		if got[name] != a {
			t.Errorf("%s: %s, want %s", name, got[name], a)
		}
	}
	// A known object whose entry did not change is not dry-run, whatever
	// its resourceVersion; one whose entry changed is, and so is everything
	// else the server can answer.
	if n := f.dryRuns["known"]; n != 0 {
		t.Errorf("known object dry-run %d times, want 0", n)
	}
	if n := f.dryRuns["known-moved"]; n != 1 {
		t.Errorf("known object that moved dry-run %d times, want 1", n)
	}
	for _, name := range []string{"w", "ct", "c"} {
		if n := f.dryRuns[name]; n != 0 {
			t.Errorf("%s dry-run %d times: an unserved kind or a new namespace needs none", name, n)
		}
	}
	wantVerified := map[string]Verification{
		"known": VerifiedRecord, "known-moved": VerifiedDryRun, "same": VerifiedDryRun, "conflict": VerifiedDryRun,
		"w": "", "ct": "", "c": "",
	}
	for _, c := range p.Changes {
		if v, ok := wantVerified[c.Ref.Name]; ok && c.Verified != v {
			t.Errorf("%s: verified %q, want %q", c.Ref.Name, c.Verified, v)
		}
		switch c.Ref.Name {
		case "known":
			if c.Applied != recorded || c.LiveResourceVersion != "6" {
				t.Errorf("known: fields %q, live resourceVersion %q", c.Applied, c.LiveResourceVersion)
			}
		case "conflict":
			if len(c.Conflicts) != 1 || c.Conflicts[0].Manager != "kubectl-edit" || c.Conflicts[0].Field != ".data.k" || c.Message != ConflictHelp {
				t.Errorf("conflict: %+v", c)
			}
		case "changed":
			if c.Diff == "" || c.LiveResourceVersion != "7" {
				t.Errorf("update without diff or live resourceVersion: %+v", c)
			}
		}
	}
	if s := p.Summary; s.Create != 3 || s.Update != 1 || s.Unchanged != 3 || s.Conflict != 1 || s.Invalid != 2 || s.Pending != 2 {
		t.Errorf("summary %+v", s)
	}
}

// Prunes are planned from the snapshot: a member already gone is not.
func TestClassifyPrunes(t *testing.T) {
	gone, there := cm("gone", nil), cm("there", nil)
	f := &fakeCluster{served: map[schema.GroupKind]bool{{Kind: "ConfigMap"}: true}, dryRuns: map[string]int{}}
	in := Input{Live: map[object.Key]*unstructured.Unstructured{there.Ref.Key(): there.Obj}, Prune: []object.Ref{gone.Ref, there.Ref}}
	p, err := Compute(context.Background(), f, in, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 || p.Changes[0].Ref.Name != "there" || p.Changes[0].Action != Delete {
		t.Errorf("changes %+v, want one delete of there", p.Changes)
	}
}

// AppliedFields digests snapply's Apply entries only, without their time.
func TestAppliedFields(t *testing.T) {
	entry := func(manager, op, t string, fields map[string]any) map[string]any {
		return map[string]any{"manager": manager, "operation": op, "apiVersion": "v1", "fieldsType": "FieldsV1", "time": t, "fieldsV1": fields}
	}
	with := func(entries ...any) *unstructured.Unstructured {
		u := cm("x", nil).Obj
		u.Object["metadata"].(map[string]any)["managedFields"] = entries
		return u
	}
	data := map[string]any{"f:data": map[string]any{"f:k": map[string]any{}}}
	base := AppliedFields(with(entry("snapply", "Apply", "2026-01-01T00:00:00Z", data)))
	if base == "" {
		t.Fatal("no digest for an object snapply applied")
	}
	cases := map[string]struct {
		u    *unstructured.Unstructured
		same bool
	}{
		"another time":                  {with(entry("snapply", "Apply", "2026-02-02T00:00:00Z", data)), true},
		"another manager's entry added": {with(entry("kube-controller-manager", "Update", "x", map[string]any{"f:status": map[string]any{}}), entry("snapply", "Apply", "y", data)), true},
		"a field taken":                 {with(entry("snapply", "Apply", "y", map[string]any{"f:data": map[string]any{}})), false},
		"an update by snapply only":     {with(entry("snapply", "Update", "y", data)), false},
		"no managedFields":              {cm("x", nil).Obj, false},
	}
	for name, tc := range cases {
		if got := AppliedFields(tc.u); (got == base) != tc.same {
			t.Errorf("%s: digest %q, base %q, want same=%v", name, got, base, tc.same)
		}
	}
}
