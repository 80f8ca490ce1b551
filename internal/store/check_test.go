package store

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestCheckFileValid builds bbolt files with every structure bbolt writes
// (branch pages, overflow pages, inline and nested buckets, a freelist or
// none) at several page sizes, and checks that checkFile accepts them all:
// a false alarm would lock users out of a good store.
func TestCheckFileValid(t *testing.T) {
	for _, pageSize := range []int{1024, 4096, 16384, 65536} {
		for _, noFreelistSync := range []bool{false, true} {
			t.Run(fmt.Sprintf("page %d, no freelist %v", pageSize, noFreelistSync), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "x.db")
				b, err := bolt.Open(path, 0o600, &bolt.Options{PageSize: pageSize, NoFreelistSync: noFreelistSync})
				if err != nil {
					t.Fatal(err)
				}
				for round := range 3 {
					err := b.Update(func(tx *bolt.Tx) error {
						top, _ := tx.CreateBucketIfNotExists([]byte("top"))
						for i := range 2000 {
							top.Put(fmt.Appendf(nil, "key-%d-%05d", round, i), bytes.Repeat([]byte{byte(i)}, i%300))
						}
						top.Put([]byte("big"), bytes.Repeat([]byte("x"), 5*pageSize+17)) // overflow pages
						inline, _ := top.CreateBucketIfNotExists([]byte("inline"))
						inline.Put([]byte("a"), []byte("b"))
						nested, _ := top.CreateBucketIfNotExists([]byte("nested"))
						deeper, _ := nested.CreateBucketIfNotExists([]byte("deeper"))
						for i := range 500 {
							deeper.Put(fmt.Appendf(nil, "%d-%d", round, i), bytes.Repeat([]byte("v"), 100))
						}
						_, err := tx.CreateBucketIfNotExists([]byte("empty"))
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
					// Deletes leave free pages.
					b.Update(func(tx *bolt.Tx) error {
						top := tx.Bucket([]byte("top"))
						for i := 0; i < 2000; i += 3 {
							top.Delete(fmt.Appendf(nil, "key-%d-%05d", round, i))
						}
						return nil
					})
				}
				b.View(func(tx *bolt.Tx) error {
					for err := range tx.Check() {
						t.Errorf("bbolt's own check: %v", err)
					}
					return nil
				})
				b.Close()
				if err := checkFile(path); err != nil {
					t.Errorf("checkFile() = %v, want a valid file", err)
				}
			})
		}
	}
}
