package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/snapply/snapply/internal/object"
)

// Run is the record of one apply: the snapshots it took and what happened
// to every object. It is stored in the records bucket under the ID of its
// before snapshot.
type Run struct {
	// Before, Desired and After are the IDs of the run's snapshots: the
	// live state before it changed anything, what it applied, and the live
	// state after it.
	Before  string `json:"before"`
	Desired string `json:"desired"`
	After   string `json:"after,omitempty"`
	// Created is when the run was recorded.
	Created time.Time `json:"created"`
	// Source is where the run came from (commit, run, PR).
	Source Source `json:"source"`
	// Interrupted is set when the apply stopped early.
	Interrupted bool `json:"interrupted,omitempty"`
	// Duration is how long the apply took.
	Duration time.Duration `json:"duration"`
	// ServerVersion is the API server's gitVersion during the run; the
	// records of a run under another version prove nothing (defaults and
	// validation may differ).
	ServerVersion string `json:"serverVersion,omitempty"`
	// Records holds one record per object of the plan.
	Records []Record `json:"records"`
}

// Record is the outcome of one object in a run.
type Record struct {
	Ref       object.Ref    `json:"ref"`
	Action    string        `json:"action"`
	Outcome   string        `json:"outcome"`
	Error     string        `json:"error,omitempty"`
	Readiness string        `json:"readiness,omitempty"`
	Started   time.Time     `json:"started,omitzero"`
	Duration  time.Duration `json:"duration"`
	// BeforeID and AfterID are the object's IDs in the before and after
	// snapshots; zero when it was not live then.
	BeforeID ID `json:"beforeId,omitzero"`
	AfterID  ID `json:"afterId,omitzero"`
	// Fields is the digest of snapply's managedFields entry on the object
	// as the run left it (plan.AppliedFields): from the apply's answer, or,
	// for an object not written, from the dry run or the earlier record
	// that showed it unchanged. Empty when the run did not leave the
	// object as applied (failed, not attempted, pruned).
	Fields string `json:"fields,omitempty"`
	// CRDGeneration is, for a custom resource, the generation of its
	// CustomResourceDefinition that the object was applied or checked
	// against; 0 for other kinds.
	CRDGeneration int64 `json:"crdGeneration,omitempty"`
}

// PutRun records a run, filling in each record's BeforeID and AfterID from
// the run's snapshots, in one transaction.
func (db *DB) PutRun(ctx context.Context, run Run) error {
	if run.Created.IsZero() {
		run.Created = time.Now().UTC()
	}
	return db.Update(func(tx *Tx) error {
		ids := func(snap string) (map[object.Key]ID, error) {
			if snap == "" {
				return nil, nil
			}
			s, err := tx.Snapshot(snap)
			if err != nil {
				return nil, err
			}
			m := make(map[object.Key]ID, len(s.Entries))
			for _, e := range s.Entries {
				m[e.Ref.Key()] = e.ID
			}
			return m, nil
		}
		before, err := ids(run.Before)
		if err != nil {
			return err
		}
		after, err := ids(run.After)
		if err != nil {
			return err
		}
		for i := range run.Records {
			k := run.Records[i].Ref.Key()
			run.Records[i].BeforeID, run.Records[i].AfterID = before[k], after[k]
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		v, err := json.Marshal(run)
		if err != nil {
			return fmt.Errorf("store: encode run %s: %w", run.Before, err)
		}
		return tx.btx.Bucket(bucketRecords).Put([]byte(run.Before), compress(v))
	})
}

// Runs returns every recorded run, oldest first (by Created: IDs made in
// the same second do not sort by time).
func (db *DB) Runs() ([]Run, error) {
	var runs []Run
	err := db.View(func(tx *Tx) error {
		b := tx.bucket(bucketRecords)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			r, err := decodeRun(db, k, v)
			if err != nil {
				return err
			}
			runs = append(runs, r)
			return nil
		})
	})
	slices.SortStableFunc(runs, func(a, b Run) int { return a.Created.Compare(b.Created) })
	return runs, err
}

func decodeRun(db *DB, k, v []byte) (Run, error) {
	raw, err := decompress(v)
	if err != nil {
		return Run{}, corrupt(db.path, "run %s: %v", k, err)
	}
	var r Run
	if err := json.Unmarshal(raw, &r); err != nil {
		return Run{}, corrupt(db.path, "run %s: %v", k, err)
	}
	return r, nil
}

// RunWithAfter returns the newest recorded run whose after snapshot is
// after, or nil when none is. It decodes only the run it returns: a store
// holds many runs of a thousand records each.
func (db *DB) RunWithAfter(after string) (*Run, error) {
	if after == "" {
		return nil, nil
	}
	needle := []byte(`"after":` + strconvQuote(after))
	var found *Run
	err := db.View(func(tx *Tx) error {
		b := tx.bucket(bucketRecords)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			raw, err := decompress(v)
			if err != nil {
				return corrupt(db.path, "run %s: %v", k, err)
			}
			if !bytes.Contains(raw, needle) {
				return nil
			}
			var r Run
			if err := json.Unmarshal(raw, &r); err != nil {
				return corrupt(db.path, "run %s: %v", k, err)
			}
			if r.After == after && (found == nil || !r.Created.Before(found.Created)) {
				found = &r
			}
			return nil
		})
	})
	return found, err
}

// strconvQuote quotes s as encoding/json does.
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
