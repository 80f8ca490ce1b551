package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Object returns the stored object id: normalised (no resourceVersion;
// Secret values redacted), with integers as int64 and other numbers as
// float64, as apimachinery decodes them.
func (db *DB) Object(id ID) (u *unstructured.Unstructured, err error) {
	err = db.View(func(tx *Tx) error {
		u, err = tx.Object(id)
		return err
	})
	return u, err
}

// Object returns the stored object id (see DB.Object). It checks that the
// object read hashes to id.
func (tx *Tx) Object(id ID) (*unstructured.Unstructured, error) {
	idx := tx.bucket(bucketObjects)
	var v []byte
	if idx != nil {
		v = idx.Get(id[:])
	}
	if v == nil {
		return nil, fmt.Errorf("store: %s: object %s %w", tx.db.path, id, ErrNotFound)
	}
	seq, n := binary.Uvarint(v)
	if n <= 0 || n != len(v) {
		return nil, corrupt(tx.db.path, "object %s: malformed index entry", id)
	}
	blob := tx.blob(seq)
	if blob == nil {
		return nil, corrupt(tx.db.path, "object %s: blob %d is missing", id, seq)
	}
	b, err := decompress(blob)
	if err != nil {
		return nil, corrupt(tx.db.path, "object %s: %v", id, err)
	}
	var m map[string]any
	if err := utiljson.Unmarshal(b, &m); err != nil {
		return nil, corrupt(tx.db.path, "object %s: %v", id, err)
	}
	if m == nil || Hash(m) != id {
		return nil, corrupt(tx.db.path, "object %s: content does not match its ID", id)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// canonicalJSON encodes a normalised object as the store keeps it: keys
// sorted, no HTML escaping, no trailing newline.
func canonicalJSON(obj map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
