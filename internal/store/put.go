package store

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/secret"
)

// snapshotIDPattern is what an ID given to PutSnapshot must look like.
var snapshotIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// PutSnapshot normalises, redacts and hashes every object of objs, and
// writes the objects the store does not hold yet and the snapshot, in one
// transaction: after a crash or a cancelled ctx the store holds all of it
// or none. It fills in meta.ID (when empty: the creation time and a random
// suffix, like "20261121T143000Z-8f3a2c"), meta.Created (when zero: now),
// meta.ToolVersion (when empty) and meta.Count, and returns the final Meta.
// An object listed twice (same group, kind, namespace and name) is an
// error.
func (db *DB) PutSnapshot(ctx context.Context, meta Meta, objs []*unstructured.Unstructured) (Meta, error) {
	var out Meta
	err := db.Update(func(tx *Tx) error {
		var err error
		out, err = tx.PutSnapshot(ctx, meta, objs)
		return err
	})
	if err != nil {
		return Meta{}, err
	}
	return out, nil
}

// PutSnapshot writes a snapshot in tx (see DB.PutSnapshot). Nothing of it
// is in the file until the transaction commits.
func (tx *Tx) PutSnapshot(ctx context.Context, meta Meta, objs []*unstructured.Unstructured) (Meta, error) {
	path := tx.db.path
	if !tx.btx.Writable() {
		return Meta{}, fmt.Errorf("store: %s: snapshot: read-only transaction", path)
	}
	switch meta.Kind {
	case Before, Desired, After:
	default:
		return Meta{}, fmt.Errorf("store: %s: snapshot kind %q: want %q, %q or %q", path, meta.Kind, Before, Desired, After)
	}
	objects, blobs, snaps := tx.bucket(bucketObjects), tx.bucket(bucketBlobs), tx.bucket(bucketSnapshots)
	if k, _ := objects.Cursor().First(); k == nil {
		// A first load fills pages whole; later inserts at random places
		// split them in halves, bbolt's default.
		objects.FillPercent = 1.0
	}
	// Blobs and snapshots are appended in key order: fill pages whole.
	blobs.FillPercent, snaps.FillPercent = 1.0, 1.0

	entries := make([]Entry, 0, len(objs))
	seen := make(map[object.Key]bool, len(objs))
	written := map[ID]bool{}
	for i, u := range objs {
		if err := ctx.Err(); err != nil {
			return Meta{}, fmt.Errorf("store: %s: snapshot: %w", path, err)
		}
		if u == nil {
			return Meta{}, fmt.Errorf("store: %s: snapshot: object %d is nil", path, i)
		}
		n, rv := Normalize(tx.db.redactor, u)
		ref := object.RefOf(n)
		if ref.Kind == "" || ref.Name == "" {
			return Meta{}, fmt.Errorf("store: %s: snapshot: object %d (%s) has no kind or no name", path, i, ref)
		}
		if seen[ref.Key()] {
			return Meta{}, fmt.Errorf("store: %s: snapshot: %s is listed twice", path, ref)
		}
		seen[ref.Key()] = true
		id := Hash(n.Object)
		if tx.db.seal != nil && secret.IsSecret(n) {
			if err := tx.seal(id, u); err != nil {
				return Meta{}, fmt.Errorf("store: %s: %s: %w", path, ref, err)
			}
		}
		if !written[id] && objects.Get(id[:]) == nil {
			b, err := canonicalJSON(n.Object)
			if err != nil {
				return Meta{}, fmt.Errorf("store: %s: %s: %w", path, ref, err)
			}
			seq, err := putBlob(blobs, compress(b))
			if err != nil {
				return Meta{}, fmt.Errorf("store: %s: %s: %w", path, ref, err)
			}
			if err := objects.Put(id[:], binary.AppendUvarint(nil, seq)); err != nil {
				return Meta{}, fmt.Errorf("store: %s: %s: %w", path, ref, err)
			}
			written[id] = true
		}
		entries = append(entries, Entry{Ref: ref, ID: id, ResourceVersion: rv})
	}
	slices.SortFunc(entries, func(a, b Entry) int { return object.Compare(a.Ref, b.Ref) })

	if meta.Created.IsZero() {
		meta.Created = time.Now()
	}
	meta.Created = meta.Created.UTC()
	if meta.ToolVersion == "" {
		meta.ToolVersion = tx.db.toolVersion
	}
	meta.Count = len(entries)
	if meta.ID == "" {
		id, err := newSnapshotID(meta.Created, snaps.Get)
		if err != nil {
			return Meta{}, fmt.Errorf("store: %s: snapshot: %w", path, err)
		}
		meta.ID = id
	} else if !snapshotIDPattern.MatchString(meta.ID) || meta.ID == Latest {
		return Meta{}, fmt.Errorf("store: %s: snapshot ID %q: want letters, digits, '.', '_' and '-', at most 64", path, meta.ID)
	} else if snaps.Get([]byte(meta.ID)) != nil {
		return Meta{}, fmt.Errorf("store: %s: snapshot %q already exists", path, meta.ID)
	}

	rec, parts := tx.chooseRecord(entries)
	rec.meta = meta
	inline := 0
	for _, p := range parts {
		if len(p) <= inlinePartMax && inline+len(p) <= inlineRecordMax {
			inline += len(p)
			rec.parts = append(rec.parts, part{inline: p})
			continue
		}
		seq, err := putBlob(blobs, p)
		if err != nil {
			return Meta{}, fmt.Errorf("store: %s: snapshot: %w", path, err)
		}
		rec.parts = append(rec.parts, part{blob: seq})
	}
	v, err := encodeRecord(rec)
	if err != nil {
		return Meta{}, fmt.Errorf("store: %s: snapshot: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return Meta{}, fmt.Errorf("store: %s: snapshot: %w", path, err)
	}
	if err := snaps.Put([]byte(meta.ID), v); err != nil {
		return Meta{}, fmt.Errorf("store: %s: snapshot: %w", path, err)
	}
	return meta, nil
}

// chooseRecord decides how to store entries: as a delta against one of
// the newest snapshots when that is smaller than a keyframe and keeps the
// chain cheap to read, else as a keyframe. It returns the record without
// metadata and parts, and the compressed parts.
func (tx *Tx) chooseRecord(entries []Entry) (record, [][]byte) {
	key := splitChanges(changes{upserts: entries})
	keySize := partsSize(key)
	best, bestParts := record{readCost: keySize}, key
	bestSize := keySize

	// The newest snapshots by creation time (IDs made in the same second
	// do not sort by time), the oldest of them first: the newer ones then
	// rebuild their entries from it rather than from their keyframe.
	metas, err := tx.Snapshots()
	if err != nil {
		metas = nil // a damaged snapshot: write a keyframe
	}
	var bases []string
	for _, m := range metas[max(0, len(metas)-baseCandidates):] {
		bases = append(bases, m.ID)
	}
	tx.built = map[string]builtEntries{}
	defer func() { tx.built = nil }()
	for _, base := range bases {
		baseEntries, rec, err := tx.entries(base)
		if err != nil || rec.depth+1 > maxChainDepth {
			continue // never build on a damaged snapshot
		}
		ch := diffEntries(baseEntries, entries)
		if ch.len() >= len(entries) {
			continue
		}
		parts := splitChanges(ch)
		size := partsSize(parts)
		// Smaller than a keyframe; the newest of equals.
		if size >= keySize || size > bestSize || rec.readCost+size > 2*keySize {
			continue
		}
		best = record{base: base, depth: rec.depth + 1, readCost: rec.readCost + size}
		bestParts, bestSize = parts, size
	}
	return best, bestParts
}

// newSnapshotID returns an unused ID made of the time t to the second and
// six random hex digits.
func newSnapshotID(t time.Time, exists func([]byte) []byte) (string, error) {
	for range 16 {
		var r [3]byte
		rand.Read(r[:])
		id := t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(r[:])
		if exists([]byte(id)) == nil {
			return id, nil
		}
	}
	return "", fmt.Errorf("no free snapshot ID for %s", t.UTC().Format(time.RFC3339))
}
