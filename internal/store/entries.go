package store

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/snapply/snapply/internal/object"
)

// Tuning of how snapshot entries are stored (see the package
// documentation).
const (
	// maxChainDepth bounds the number of deltas between a snapshot and
	// its keyframe.
	maxChainDepth = 256
	// baseCandidates is how many of the newest snapshots PutSnapshot
	// tries as the base of a delta.
	baseCandidates = 4
	// partItems is the number of entries or removals in one part.
	partItems = 64
	// A part this small is kept in the record rather than in a blob, as
	// long as the record's inline parts stay under inlineRecordMax.
	inlinePartMax   = 1024
	inlineRecordMax = 2048
)

// changes turns one list of entries into another: set the upserts (by
// key), delete the removals.
type changes struct {
	upserts  []Entry
	removals []object.Key
}

func (c changes) len() int { return len(c.upserts) + len(c.removals) }

// encodeChanges encodes a change list:
//
//	uvarint  number of upserts, then each: string group, version, kind,
//	         namespace, name; 32 bytes ID; string resourceVersion
//	uvarint  number of removals, then each: string group, kind,
//	         namespace, name
func encodeChanges(c changes) []byte {
	var e encoder
	e.uvarint(uint64(len(c.upserts)))
	for _, en := range c.upserts {
		e.string(en.Ref.Group)
		e.string(en.Ref.Version)
		e.string(en.Ref.Kind)
		e.string(en.Ref.Namespace)
		e.string(en.Ref.Name)
		e.id(en.ID)
		e.string(en.ResourceVersion)
	}
	e.uvarint(uint64(len(c.removals)))
	for _, k := range c.removals {
		e.string(k.Group)
		e.string(k.Kind)
		e.string(k.Namespace)
		e.string(k.Name)
	}
	return e.b
}

func decodeChanges(b []byte) (changes, error) {
	d := decoder{b: b}
	var c changes
	n := d.count("upserts", 6+len(ID{}))
	c.upserts = make([]Entry, 0, n)
	for range n {
		var en Entry
		en.Ref.Group = d.string("entry")
		en.Ref.Version = d.string("entry")
		en.Ref.Kind = d.string("entry")
		en.Ref.Namespace = d.string("entry")
		en.Ref.Name = d.string("entry")
		en.ID = d.id("entry")
		en.ResourceVersion = d.string("entry")
		c.upserts = append(c.upserts, en)
	}
	n = d.count("removals", 4)
	for range n {
		var k object.Key
		k.Group = d.string("removal")
		k.Kind = d.string("removal")
		k.Namespace = d.string("removal")
		k.Name = d.string("removal")
		c.removals = append(c.removals, k)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("change list: trailing bytes")
	}
	return c, d.err
}

// diffEntries returns the changes that turn base into next.
func diffEntries(base, next []Entry) changes {
	old := make(map[object.Key]Entry, len(base))
	for _, e := range base {
		old[e.Ref.Key()] = e
	}
	var c changes
	for _, e := range next {
		k := e.Ref.Key()
		if o, ok := old[k]; !ok || o != e {
			c.upserts = append(c.upserts, e)
		}
		delete(old, k)
	}
	for _, e := range base {
		if _, ok := old[e.Ref.Key()]; ok {
			c.removals = append(c.removals, e.Ref.Key())
		}
	}
	return c
}

// splitChanges cuts c into change lists of at most partItems items each
// and compresses them.
func splitChanges(c changes) [][]byte {
	var parts [][]byte
	for up := c.upserts; len(up) > 0; {
		n := min(len(up), partItems)
		parts = append(parts, compress(encodeChanges(changes{upserts: up[:n]})))
		up = up[n:]
	}
	for rm := c.removals; len(rm) > 0; {
		n := min(len(rm), partItems)
		parts = append(parts, compress(encodeChanges(changes{removals: rm[:n]})))
		rm = rm[n:]
	}
	return parts
}

func partsSize(parts [][]byte) uint64 {
	var n uint64
	for _, p := range parts {
		n += uint64(len(p))
	}
	return n
}

// builtEntries are the entries of a snapshot, rebuilt, with its record.
type builtEntries struct {
	m   map[object.Key]Entry
	rec record
}

// entries rebuilds the entries of the snapshot key from its keyframe and
// the deltas down to it, and returns them with the snapshot's record.
func (tx *Tx) entries(key string) ([]Entry, record, error) {
	b, err := tx.entryMap(key)
	if err != nil {
		return nil, record{}, err
	}
	entries := make([]Entry, 0, len(b.m))
	for _, e := range b.m {
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b Entry) int { return object.Compare(a.Ref, b.Ref) })
	return entries, b.rec, nil
}

// entryMap rebuilds the entries of the snapshot key by key. It starts from
// the nearest snapshot of the chain in tx.built, if any, and adds the
// result to it.
func (tx *Tx) entryMap(key string) (builtEntries, error) {
	b := tx.bucket(bucketSnapshots)
	var chain []record
	var from *builtEntries
	for cur := key; ; {
		if len(chain) > maxChainDepth {
			return builtEntries{}, corrupt(tx.db.path, "snapshot %q: delta chain longer than %d", key, maxChainDepth)
		}
		if c, ok := tx.built[cur]; ok {
			if n := len(chain); n > 0 && c.rec.depth+1 != chain[n-1].depth {
				return builtEntries{}, corrupt(tx.db.path, "snapshot %q: base %q has depth %d, want %d", chain[n-1].meta.ID, cur, c.rec.depth, chain[n-1].depth-1)
			}
			from = &c
			break
		}
		var v []byte
		if b != nil {
			v = b.Get([]byte(cur))
		}
		if v == nil {
			if len(chain) == 0 {
				return builtEntries{}, fmt.Errorf("store: %s: snapshot %q %w", tx.db.path, key, ErrNotFound)
			}
			return builtEntries{}, corrupt(tx.db.path, "snapshot %q: base snapshot %q is missing", key, cur)
		}
		r, err := decodeRecord(v)
		if err != nil {
			return builtEntries{}, corrupt(tx.db.path, "snapshot %q: %v", cur, err)
		}
		if n := len(chain); n > 0 && r.depth+1 != chain[n-1].depth {
			return builtEntries{}, corrupt(tx.db.path, "snapshot %q: base %q has depth %d, want %d", chain[n-1].meta.ID, cur, r.depth, chain[n-1].depth-1)
		}
		if (r.base == "") != (r.depth == 0) {
			return builtEntries{}, corrupt(tx.db.path, "snapshot %q: depth %d with base %q", cur, r.depth, r.base)
		}
		r.meta.ID = cur
		chain = append(chain, r)
		if r.base == "" {
			break
		}
		cur = r.base
	}
	if len(chain) == 0 {
		return *from, nil
	}
	m := map[object.Key]Entry{}
	if from != nil {
		m = maps.Clone(from.m)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		for _, p := range chain[i].parts {
			c, err := tx.readPart(p)
			if err != nil {
				return builtEntries{}, corrupt(tx.db.path, "snapshot %q: entries: %v", chain[i].meta.ID, err)
			}
			for _, e := range c.upserts {
				m[e.Ref.Key()] = e
			}
			for _, k := range c.removals {
				delete(m, k)
			}
		}
		if chain[i].meta.Count != len(m) {
			return builtEntries{}, corrupt(tx.db.path, "snapshot %q: %d entries, metadata says %d", chain[i].meta.ID, len(m), chain[i].meta.Count)
		}
	}
	out := builtEntries{m: m, rec: chain[0]}
	if tx.built != nil {
		tx.built[key] = out
	}
	return out, nil
}

func (tx *Tx) readPart(p part) (changes, error) {
	v := p.inline
	if v == nil {
		if v = tx.blob(p.blob); v == nil {
			return changes{}, fmt.Errorf("blob %d is missing", p.blob)
		}
	}
	b, err := decompress(v)
	if err != nil {
		return changes{}, err
	}
	return decodeChanges(b)
}

// blob returns the value of blob seq, or nil. The slice is valid only in
// the transaction.
func (tx *Tx) blob(seq uint64) []byte {
	b := tx.bucket(bucketBlobs)
	if b == nil {
		return nil
	}
	return b.Get(blobKey(seq))
}

// putBlob appends v to the blobs bucket and returns its sequence number.
func putBlob(b *bolt.Bucket, v []byte) (uint64, error) {
	seq, err := b.NextSequence()
	if err != nil {
		return 0, err
	}
	return seq, b.Put(blobKey(seq), v)
}

// blobKey is the key of blob seq: big-endian, so that new blobs go to the
// end of the bucket.
func blobKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, seq)
}
