package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// assertOneLine fails unless err is a one-line store error about path.
func assertOneLine(t *testing.T, err error, path string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "store: "+path+": ") {
		t.Errorf("error %q: want one line starting with %q", msg, "store: "+path+": ")
	}
}

func TestOpenCreates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "snapply.db")
	db, err := Open(path, Options{Timeout: time.Second, ToolVersion: "v1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("new store has mode %v, want 0600", perm)
	}
	digest := db.Redactor().Digest([]byte("hunter2"))
	err = db.bolt.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if got := string(meta.Get(keySchema)); got != "1" {
			t.Errorf("schema = %q, want 1", got)
		}
		if got := len(meta.Get(keyRedactionKey)); got != 32 {
			t.Errorf("redaction key has %d bytes, want 32", got)
		}
		if got := string(meta.Get(keyCreatedBy)); got != "v1.2.3" {
			t.Errorf("created-by = %q, want v1.2.3", got)
		}
		for _, b := range allBuckets {
			if tx.Bucket(b) == nil {
				t.Errorf("bucket %s missing", b)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db, DefaultOptions())
	if got := db.Redactor().Digest([]byte("hunter2")); got != digest {
		t.Errorf("reopened store digests %s, want %s (the key must persist)", got, digest)
	}

	other := openTest(t)
	if other.Redactor().Digest([]byte("hunter2")) == digest {
		t.Error("two stores share a redaction key")
	}
}

func TestOpenNewerSchema(t *testing.T) {
	for _, schema := range []string{"2", "2.1"} {
		t.Run(schema, func(t *testing.T) {
			db := openTest(t)
			path := db.Path()
			db.Close()
			setMeta(t, path, keySchema, schema)
			before, _ := os.ReadFile(path)
			_, err := Open(path, DefaultOptions())
			if !errors.Is(err, ErrNewerSchema) {
				t.Fatalf("Open() error = %v, want ErrNewerSchema", err)
			}
			want := "store: " + path + ": schema version " + schema + " is newer than this snapply understands (1); upgrade snapply"
			if err.Error() != want {
				t.Errorf("error = %q\nwant    %q", err, want)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Error("Open changed a store it refused")
			}
			if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrNewerSchema) {
				t.Errorf("read-only Open() error = %v, want ErrNewerSchema", err)
			}
		})
	}
	t.Run("same major, newer minor", func(t *testing.T) {
		db := openTest(t)
		path := db.Path()
		db.Close()
		setMeta(t, path, keySchema, "1.7")
		db, err := Open(path, DefaultOptions())
		if err != nil {
			t.Fatalf("Open() = %v, want a store of schema 1.7 to open", err)
		}
		db.Close()
	})
}

// setMeta writes key=value into the meta bucket of the store at path.
func setMeta(t *testing.T, path string, key []byte, value string) {
	t.Helper()
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = b.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(key, []byte(value))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenNotAStore(t *testing.T) {
	dir := t.TempDir()
	// A real store with data, to cut short.
	src := filepath.Join(dir, "src.db")
	db, err := Open(src, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	put(t, db, Before, newApp(300).objs)
	db.Close()
	full, _ := os.ReadFile(src)

	foreign := filepath.Join(dir, "foreign.db")
	b, err := bolt.Open(foreign, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Update(func(tx *bolt.Tx) error {
		bk, _ := tx.CreateBucket([]byte("widgets"))
		return bk.Put([]byte("a"), []byte("b"))
	})
	b.Close()
	foreignBytes, _ := os.ReadFile(foreign)

	tests := []struct {
		name string
		data []byte
	}{
		{"text file", []byte("apiVersion: v1\nkind: ConfigMap\n")},
		{"random bytes", bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 4096)},
		{"truncated to one page", full[:4096]},
		{"truncated in the middle", full[:len(full)/2]},
		{"truncated by one page", full[:len(full)-4096]},
		{"bbolt file of another program", foreignBytes},
	}
	for _, tt := range tests {
		for _, ro := range []bool{false, true} {
			name := tt.name
			if ro {
				name += " read-only"
			}
			t.Run(name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "snapply.db")
				if err := os.WriteFile(path, tt.data, 0o600); err != nil {
					t.Fatal(err)
				}
				db, err := Open(path, Options{ReadOnly: ro, Timeout: time.Second})
				if err == nil {
					db.Close()
					t.Fatal("Open() succeeded, want an error")
				}
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("Open() error = %v, want ErrCorrupt", err)
				}
				assertOneLine(t, err, path)
				if after, _ := os.ReadFile(path); !bytes.Equal(tt.data, after) {
					t.Error("Open changed a file it refused")
				}
			})
		}
	}
}

func TestOpenLocked(t *testing.T) {
	db := openTest(t)
	for _, ro := range []bool{false, true} {
		start := time.Now()
		_, err := Open(db.Path(), Options{ReadOnly: ro, Timeout: 300 * time.Millisecond})
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("Open(ReadOnly: %v) of a store open for writing: error = %v, want ErrLocked", ro, err)
		}
		if want := "store: " + db.Path() + ": locked by another process"; err.Error() != want {
			t.Errorf("error = %q, want %q", err, want)
		}
		if waited := time.Since(start); waited < 250*time.Millisecond {
			t.Errorf("Open gave up after %v, want it to wait for the timeout", waited)
		}
	}
	// Once the writer is gone, the store opens.
	db.Close()
	db2, err := Open(db.Path(), Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	db2.Close()
}

func TestOpenReadOnly(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "missing.db"), Options{ReadOnly: true})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read-only Open of a missing file: error = %v, want fs.ErrNotExist", err)
	}

	dir := t.TempDir()
	if _, err := Open(dir, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Open of a directory: error = %v, want is a directory", err)
	}

	db := openTest(t)
	m := put(t, db, Before, newApp(10).objs)
	db.Close()
	r1, err := Open(db.Path(), Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := Open(db.Path(), Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("second reader: %v", err)
	}
	defer r2.Close()
	s, err := r2.Snapshot(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Entries) != 10 {
		t.Errorf("%d entries, want 10", len(s.Entries))
	}
	if _, err := r1.PutSnapshot(t.Context(), Meta{Kind: Before}, newApp(1).objs); err == nil {
		t.Error("PutSnapshot on a read-only store succeeded")
	}
}

func TestCloseTruncates(t *testing.T) {
	db := openTest(t)
	a := newApp(500)
	put(t, db, Before, a.objs)
	var hwm int64
	db.bolt.View(func(tx *bolt.Tx) error { hwm = tx.Size(); return nil })
	grown := fileSize(t, db.Path())
	db = reopen(t, db, DefaultOptions())
	closed := fileSize(t, db.Path())
	t.Logf("file %d bytes while open, %d after Close, high-water mark %d", grown, closed, hwm)
	if closed != hwm {
		t.Errorf("file has %d bytes after Close, want the high-water mark %d", closed, hwm)
	}
	// The truncated file reads and grows again.
	a.change(50)
	m := put(t, db, Before, a.objs)
	db = reopen(t, db, DefaultOptions())
	s, err := db.Snapshot(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Entries {
		if _, err := db.Object(e.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenDamagedPages damages the pages of a real store in ways that make
// bbolt read out of bounds, loop for ever or allocate without limit, and
// checks that Open refuses the file instead.
func TestOpenDamagedPages(t *testing.T) {
	db := openTest(t)
	put(t, db, Before, newApp(1000).objs)
	db.Close()
	good, err := os.ReadFile(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.NativeEndian.Uint32(good[pageHeaderSize+8:]))
	pages := func(flags uint16) []int {
		var ids []int
		for id := 2; (id+1)*ps <= len(good); id++ {
			if binary.NativeEndian.Uint64(good[id*ps:]) == uint64(id) && binary.NativeEndian.Uint16(good[id*ps+8:]) == flags {
				ids = append(ids, id)
			}
		}
		return ids
	}
	branches, leaves, freelists := pages(branchPageFlag), pages(leafPageFlag), pages(freelistPageFlag)
	if len(branches) == 0 || len(leaves) == 0 || len(freelists) == 0 {
		t.Fatalf("found %d branch, %d leaf, %d freelist pages; the test needs each", len(branches), len(leaves), len(freelists))
	}
	tests := []struct {
		name   string
		damage func(b []byte)
	}{
		{"branch page pointing to itself", func(b []byte) {
			for _, id := range branches {
				binary.NativeEndian.PutUint64(b[id*ps+pageHeaderSize+8:], uint64(id))
			}
		}},
		{"branch page pointing past the end", func(b []byte) {
			for _, id := range branches {
				binary.NativeEndian.PutUint64(b[id*ps+pageHeaderSize+8:], 1<<40)
			}
		}},
		{"leaf element past the page", func(b []byte) {
			for _, id := range leaves {
				binary.NativeEndian.PutUint32(b[id*ps+pageHeaderSize+12:], 1<<30)
			}
		}},
		{"huge element count", func(b []byte) {
			for _, id := range append(branches, leaves...) {
				binary.NativeEndian.PutUint16(b[id*ps+10:], 0xFFFF)
			}
		}},
		{"huge freelist", func(b []byte) {
			for _, id := range freelists {
				binary.NativeEndian.PutUint16(b[id*ps+10:], 0xFFFF)
				binary.NativeEndian.PutUint64(b[id*ps+pageHeaderSize:], 1<<60)
			}
		}},
		{"page type wiped", func(b []byte) {
			for _, id := range append(branches, leaves...) {
				binary.NativeEndian.PutUint16(b[id*ps+8:], 0)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bytes.Clone(good)
			tt.damage(b)
			path := filepath.Join(t.TempDir(), "snapply.db")
			os.WriteFile(path, b, 0o600)
			db, err := Open(path, Options{Timeout: time.Second})
			if err == nil {
				db.Close()
				t.Fatal("Open() succeeded, want an error")
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("error = %v, want ErrCorrupt", err)
			}
			assertOneLine(t, err, path)
		})
	}
}
