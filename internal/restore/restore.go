// Package restore turns the record of a past run in the store into the
// desired set that brings the state of that run back: what `snapply
// rollback` applies. It reads the store only; applying is the pipeline's.
package restore

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/secret"
	"github.com/snapply/snapply/internal/store"
)

// State says which state of a run a rollback restores.
type State string

// The states of a run that can be restored.
const (
	// StateDesired: what the run applied (its desired snapshot).
	StateDesired State = "desired"
	// StateBefore: what the objects the run touched were before it, as far
	// as snapply owned them.
	StateBefore State = "before"
)

// ParseState parses a --state flag.
func ParseState(s string) (State, error) {
	switch st := State(s); st {
	case StateDesired, StateBefore:
		return st, nil
	}
	return "", fmt.Errorf("unknown state %q: want %s or %s", s, StateDesired, StateBefore)
}

// Set is the desired set of a rollback.
type Set struct {
	// Objects are the objects to apply, each with the source "snapshot
	// <id>"; never nil.
	Objects []object.Object
	// Restores is the ID of the snapshot whose state is restored: the
	// run's desired or before snapshot.
	Restores string
	// State is the state restored.
	State State
	// Run is the recorded run the snapshot belongs to.
	Run store.Run
	// Kept lists the Secrets to leave as they are live: their values are
	// redacted in the store and were not sealed (no store key when they
	// were recorded). They are neither applied nor pruned.
	Kept []object.Ref
}

// FromRun finds the recorded run that snapshotID belongs to, as its
// before, desired or after snapshot (snapshotID is a full ID, a unique
// prefix, or "latest" for the newest run), and returns the set that
// restores its state:
//
//   - StateDesired: the objects of the run's desired snapshot, what it
//     applied;
//   - StateBefore: for each object of the run that was live before it, the
//     fields that field manager "snapply" owned then (see ExtractOwned),
//     with its identity and ApplySet label. Objects the run created are
//     left out (the prune of the rollback removes them); objects it pruned
//     come back.
//
// A Secret whose values the store holds only as digests is restored from
// the values sealed in the store (store.DB.Unsealed), or, when none were
// sealed, listed in Kept instead. Sealed values with a missing or wrong key
// are an error.
func FromRun(db *store.DB, snapshotID string, state State) (*Set, error) {
	if _, err := ParseState(string(state)); err != nil {
		return nil, err
	}
	run, err := findRun(db, snapshotID)
	if err != nil {
		return nil, err
	}
	set := &Set{Objects: []object.Object{}, Run: *run, State: state}
	switch state {
	case StateDesired:
		set.Restores = run.Desired
		err = set.addDesired(db)
	case StateBefore:
		set.Restores = run.Before
		err = set.addBefore(db)
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(set.Objects, func(a, b object.Object) int { return object.Compare(a.Ref, b.Ref) })
	slices.SortFunc(set.Kept, object.Compare)
	return set, nil
}

// findRun returns the run that snapshot id belongs to.
func findRun(db *store.DB, id string) (*store.Run, error) {
	runs, err := db.Runs()
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("store: %s: no recorded run: a rollback restores a run of `snapply apply`", db.Path())
	}
	if id == store.Latest {
		return &runs[len(runs)-1], nil
	}
	snap, err := db.Snapshot(id)
	if err != nil {
		return nil, err
	}
	full := snap.Meta.ID
	for i := len(runs) - 1; i >= 0; i-- {
		if r := &runs[i]; r.Before == full || r.Desired == full || r.After == full {
			return r, nil
		}
	}
	return nil, fmt.Errorf("store: %s: snapshot %s (%s) belongs to no recorded run (a plan's snapshot?): give a snapshot of `snapply apply`; `snapply history` lists them", db.Path(), full, snap.Meta.Kind)
}

// addDesired adds the objects of the run's desired snapshot.
func (s *Set) addDesired(db *store.DB) error {
	snap, err := db.Snapshot(s.Run.Desired)
	if err != nil {
		return err
	}
	src := object.Source{File: "snapshot " + snap.Meta.ID}
	for _, e := range snap.Entries {
		u, err := db.Object(e.ID)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Ref, err)
		}
		if redacted(u) {
			if u, err = unsealed(db, e.ID); err != nil {
				return err
			}
			if u == nil {
				s.Kept = append(s.Kept, e.Ref)
				continue
			}
		}
		s.Objects = append(s.Objects, object.Object{Ref: object.RefOf(u), Source: src, Obj: u})
	}
	return nil
}

// addBefore adds, for each object of the run live before it, the part of
// its before state that snapply owned.
func (s *Set) addBefore(db *store.DB) error {
	src := object.Source{File: "snapshot " + s.Run.Before}
	seen := map[object.Key]bool{}
	for _, r := range s.Run.Records {
		if r.BeforeID == (store.ID{}) || seen[r.Ref.Key()] {
			continue
		}
		seen[r.Ref.Key()] = true
		u, err := db.Object(r.BeforeID)
		if err != nil {
			return fmt.Errorf("%s: %w", r.Ref, err)
		}
		owned, err := ownedPart(u)
		if err != nil {
			return err
		}
		// Unseal only when what snapply owned holds redacted values.
		if redacted(owned) {
			full, err := unsealed(db, r.BeforeID)
			if err != nil {
				return err
			}
			if full == nil {
				s.Kept = append(s.Kept, r.Ref)
				continue
			}
			if owned, err = ownedPart(full); err != nil {
				return err
			}
		}
		s.Objects = append(s.Objects, object.Object{Ref: object.RefOf(owned), Source: src, Obj: owned})
	}
	return nil
}

// ownedPart returns what snapply owned of u, with u's ApplySet label.
func ownedPart(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	owned, err := ExtractOwned(u, kube.FieldManager)
	if err != nil {
		return nil, err
	}
	if id, ok := u.GetLabels()[apply.PartOfLabel]; ok {
		labels := owned.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[apply.PartOfLabel] = id
		owned.SetLabels(labels)
	}
	return owned, nil
}

// unsealed returns the Secret id with its sealed values, or nil when the
// store has none.
func unsealed(db *store.DB, id store.ID) (*unstructured.Unstructured, error) {
	u, err := db.Unsealed(id)
	if errors.Is(err, store.ErrNotSealed) {
		return nil, nil
	}
	return u, err
}

// redacted reports whether u is a Secret with any value replaced by a
// digest: in data, in stringData, or its last-applied annotation.
func redacted(u *unstructured.Unstructured) bool {
	if !secret.IsSecret(u) {
		return false
	}
	for _, field := range []string{"data", "stringData"} {
		switch v := u.Object[field].(type) {
		case string:
			if secret.IsRedacted(v) {
				return true
			}
		case map[string]any:
			for _, x := range v {
				if s, ok := x.(string); ok && secret.IsRedacted(s) {
					return true
				}
			}
		}
	}
	la, _, _ := unstructured.NestedString(u.Object, "metadata", "annotations", secret.LastAppliedAnnotation)
	return secret.IsRedacted(la)
}
