package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/snapply/snapply/internal/object"
)

func entry(kind, ns, name, rv string) Entry {
	ref := object.Ref{Version: "v1", Kind: kind, Namespace: ns, Name: name}
	return Entry{Ref: ref, ID: Hash(kind + ns + name + rv), ResourceVersion: rv}
}

func TestDiffEntries(t *testing.T) {
	a, b, c := entry("ConfigMap", "n", "a", "1"), entry("ConfigMap", "n", "b", "1"), entry("Service", "n", "c", "1")
	a2 := entry("ConfigMap", "n", "a", "2")
	bV2 := b
	bV2.Ref.Version = "v2"
	tests := []struct {
		name       string
		base, next []Entry
		want       changes
	}{
		{"equal", []Entry{a, b}, []Entry{a, b}, changes{}},
		{"from nothing", nil, []Entry{a, b}, changes{upserts: []Entry{a, b}}},
		{"to nothing", []Entry{a, b}, nil, changes{removals: []object.Key{a.Ref.Key(), b.Ref.Key()}}},
		{"changed", []Entry{a, b}, []Entry{a2, b}, changes{upserts: []Entry{a2}}},
		{"read with another version", []Entry{a, b}, []Entry{a, bV2}, changes{upserts: []Entry{bV2}}},
		{"added and removed", []Entry{a, b}, []Entry{b, c}, changes{upserts: []Entry{c}, removals: []object.Key{a.Ref.Key()}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := diffEntries(tt.base, tt.next)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(changes{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("diffEntries() (-want +got):\n%s", diff)
			}
			back, err := decodeChanges(encodeChanges(got))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, back, cmp.AllowUnexported(changes{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("change list round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeMalformed(t *testing.T) {
	good := encodeChanges(changes{upserts: []Entry{entry("ConfigMap", "n", "a", "1")}, removals: []object.Key{{Kind: "Service", Name: "x"}}})
	for i := range len(good) {
		if _, err := decodeChanges(good[:i]); err == nil {
			t.Errorf("decodeChanges of %d of %d bytes succeeded", i, len(good))
		}
	}
	if _, err := decodeChanges(append(good, 0)); err == nil {
		t.Error("decodeChanges with a trailing byte succeeded")
	}
	// A count far larger than the input must fail, not allocate.
	huge := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}
	if _, err := decodeChanges(huge); err == nil {
		t.Error("decodeChanges of a huge count succeeded")
	}

	rec, err := encodeRecord(record{meta: Meta{ID: "x", Kind: Before, Count: 1}, base: "y", depth: 1, readCost: 9, parts: []part{{inline: []byte{1, 2}}, {blob: 7}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if got.base != "y" || got.depth != 1 || got.readCost != 9 || len(got.parts) != 2 || got.parts[1].blob != 7 {
		t.Errorf("decodeRecord() = %+v", got)
	}
	for i := range len(rec) {
		if _, err := decodeRecord(rec[:i]); err == nil {
			t.Errorf("decodeRecord of %d of %d bytes succeeded", i, len(rec))
		}
	}
	if _, err := decompress([]byte{codecFlateV1, 0xff, 0x00}); err == nil {
		t.Error("decompress of garbage succeeded")
	}
	if _, err := decompress([]byte{9, 1, 2}); err == nil {
		t.Error("decompress of an unknown encoding succeeded")
	}
}
