package store

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/snapply/snapply/internal/object"
)

// Kind says what a snapshot holds.
type Kind string

// The kinds of snapshot.
const (
	// Before: the live state before an apply (or the state a plan was
	// computed against).
	Before Kind = "before"
	// Desired: the rendered objects a run meant to apply.
	Desired Kind = "desired"
	// After: the live state after an apply.
	After Kind = "after"
)

// Source is the run that took a snapshot.
type Source struct {
	Commit     string `json:"commit,omitempty"`
	Ref        string `json:"ref,omitempty"`
	RunID      string `json:"runID,omitempty"`
	RunAttempt string `json:"runAttempt,omitempty"`
	Workflow   string `json:"workflow,omitempty"`
	Actor      string `json:"actor,omitempty"`
	Repository string `json:"repository,omitempty"`
	PR         int    `json:"pr,omitempty"`
	// Restores is the ID of the snapshot that a rollback restored.
	Restores string `json:"restores,omitempty"`
}

// Cluster names the cluster a snapshot was taken of.
type Cluster struct {
	// Server identifies the API server without naming it (kube's
	// Client.ServerHash: a hash of its URL): it tells clusters apart
	// without writing their address into the file.
	Server string `json:"server,omitempty"`
	// Context is the kubeconfig context, if any.
	Context string `json:"context,omitempty"`
}

// Meta describes a snapshot.
type Meta struct {
	// ID is sortable by time and unique in the store, like
	// "20261121T143000Z-8f3a2c"; a unique prefix of it names it too.
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	Kind    Kind      `json:"kind"`
	Cluster Cluster   `json:"cluster"`
	Source  Source    `json:"source"`
	// ToolVersion is the snapply version that took the snapshot.
	ToolVersion string `json:"toolVersion,omitempty"`
	// Scope is the snapshot scope (managed, namespaces, cluster).
	Scope string `json:"scope,omitempty"`
	// Count is the number of entries.
	Count int `json:"count"`
	// Skipped lists the types that could not be listed, each with the
	// reason.
	Skipped []string `json:"skipped,omitempty"`
}

// Entry is one object of a snapshot.
type Entry struct {
	Ref object.Ref `json:"ref"`
	// ID is the object's ID in the store (see Tx.Object).
	ID ID `json:"id"`
	// ResourceVersion is the live object's resourceVersion, which the
	// stored object does not hold.
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// Snapshot is a snapshot with its entries, sorted by object.Compare.
type Snapshot struct {
	Meta    Meta
	Entries []Entry
}

// Latest names the newest snapshot where a snapshot ID is expected.
const Latest = "latest"

// Snapshots returns the metadata of every snapshot, oldest first.
func (db *DB) Snapshots() (metas []Meta, err error) {
	err = db.View(func(tx *Tx) error {
		metas, err = tx.Snapshots()
		return err
	})
	return metas, err
}

// Snapshot returns the snapshot named id: a full ID, a prefix of one that
// matches no other (ErrAmbiguous otherwise), or "latest" for the newest.
func (db *DB) Snapshot(id string) (s *Snapshot, err error) {
	err = db.View(func(tx *Tx) error {
		s, err = tx.Snapshot(id)
		return err
	})
	return s, err
}

// Snapshots returns the metadata of every snapshot, oldest first (by
// creation time, then ID).
func (tx *Tx) Snapshots() ([]Meta, error) {
	b := tx.bucket(bucketSnapshots)
	if b == nil {
		return nil, nil
	}
	var metas []Meta
	err := b.ForEach(func(k, v []byte) error {
		m, err := decodeRecordMeta(v)
		if err != nil {
			return corrupt(tx.db.path, "snapshot %q: %v", k, err)
		}
		m.ID = string(k)
		metas = append(metas, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortMetas(metas)
	return metas, nil
}

func sortMetas(metas []Meta) {
	slices.SortStableFunc(metas, func(a, b Meta) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
	})
}

// Snapshot returns the snapshot named id (see DB.Snapshot).
func (tx *Tx) Snapshot(id string) (*Snapshot, error) {
	key, err := tx.resolve(id)
	if err != nil {
		return nil, err
	}
	entries, rec, err := tx.entries(key)
	if err != nil {
		return nil, err
	}
	rec.meta.ID = key
	return &Snapshot{Meta: rec.meta, Entries: entries}, nil
}

// resolve turns what a user typed into the ID of one snapshot.
func (tx *Tx) resolve(id string) (string, error) {
	hint := `run "snapply history" to list snapshot IDs`
	b := tx.bucket(bucketSnapshots)
	if id == Latest {
		metas, err := tx.Snapshots()
		if err != nil {
			return "", err
		}
		if len(metas) == 0 {
			return "", fmt.Errorf("store: %s: snapshot %q %w: the store holds no snapshots", tx.db.path, id, ErrNotFound)
		}
		return metas[len(metas)-1].ID, nil
	}
	if id == "" {
		return "", fmt.Errorf("store: %s: empty snapshot ID; %s", tx.db.path, hint)
	}
	if b == nil {
		return "", fmt.Errorf("store: %s: snapshot %q %w; %s", tx.db.path, id, ErrNotFound, hint)
	}
	if b.Get([]byte(id)) != nil {
		return id, nil
	}
	var matches []string
	c := b.Cursor()
	for k, _ := c.Seek([]byte(id)); k != nil && bytes.HasPrefix(k, []byte(id)); k, _ = c.Next() {
		matches = append(matches, string(k))
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("store: %s: snapshot %q %w; %s", tx.db.path, id, ErrNotFound, hint)
	case 1:
		return matches[0], nil
	}
	shown := matches
	if len(shown) > 5 {
		shown = append(shown[:5:5], "...")
	}
	return "", fmt.Errorf("store: %s: snapshot prefix %q is %w: it matches %s; type more of the ID",
		tx.db.path, id, ErrAmbiguous, strings.Join(shown, ", "))
}

// The encoding of a value of the snapshots bucket: the metadata first, so
// that listing snapshots does not decode their entries.
//
//	byte     recordVersion
//	bytes    metadata, JSON
//	string   base snapshot ID; empty for a keyframe
//	uvarint  depth: 0 for a keyframe, else the base's depth + 1
//	uvarint  readCost: compressed bytes read to rebuild the entries
//	uvarint  number of parts, then each part:
//	  byte 0, bytes: the part inline, or
//	  byte 1, uvarint: the sequence number of the blob holding it
//
// Each part is a compressed change list (see encodeChanges); applying the
// parts of the keyframe and then of each delta down the chain, in order,
// gives the entries.
const recordVersion = 1

type record struct {
	meta     Meta
	base     string
	depth    uint64
	readCost uint64
	parts    []part
}

type part struct {
	inline []byte // nil for a part in a blob
	blob   uint64
}

func encodeRecord(r record) ([]byte, error) {
	mj, err := json.Marshal(r.meta)
	if err != nil {
		return nil, err
	}
	var e encoder
	e.byte(recordVersion)
	e.bytes(mj)
	e.string(r.base)
	e.uvarint(r.depth)
	e.uvarint(r.readCost)
	e.uvarint(uint64(len(r.parts)))
	for _, p := range r.parts {
		if p.inline != nil {
			e.byte(0)
			e.bytes(p.inline)
		} else {
			e.byte(1)
			e.uvarint(p.blob)
		}
	}
	return e.b, nil
}

func decodeRecordMeta(v []byte) (Meta, error) {
	d := decoder{b: v}
	return decodeMeta(&d)
}

func decodeMeta(d *decoder) (Meta, error) {
	var m Meta
	if ver := d.byte("record"); d.err == nil && ver != recordVersion {
		return m, fmt.Errorf("unknown record version %d", ver)
	}
	mj := d.bytes("metadata")
	if d.err != nil {
		return m, d.err
	}
	if err := json.Unmarshal(mj, &m); err != nil {
		return m, fmt.Errorf("metadata: %w", err)
	}
	return m, nil
}

func decodeRecord(v []byte) (record, error) {
	d := decoder{b: v}
	var r record
	var err error
	if r.meta, err = decodeMeta(&d); err != nil {
		return r, err
	}
	r.base = d.string("base")
	r.depth = d.uvarint("depth")
	r.readCost = d.uvarint("read cost")
	n := d.count("parts", 2)
	for range n {
		switch d.byte("part") {
		case 0:
			b := d.bytes("part")
			if b == nil {
				b = []byte{}
			}
			r.parts = append(r.parts, part{inline: b})
		case 1:
			r.parts = append(r.parts, part{blob: d.uvarint("part")})
		default:
			d.fail("part")
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("record: trailing bytes")
	}
	return r, d.err
}
