package store

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fileKey returns a distinct 32-byte test key.
func fileKey(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

// encOpts returns the options of a store encrypted with key.
func encOpts(key []byte, readOnly bool) Options {
	o := DefaultOptions()
	o.FileKey, o.SealKey, o.ReadOnly = key, key, readOnly
	return o
}

// encryptedStore writes a store encrypted with key that holds one
// snapshot of an application of n objects, and returns its path.
func encryptedStore(t *testing.T, key []byte, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), DefaultPath)
	db, err := Open(path, encOpts(key, false))
	if err != nil {
		t.Fatal(err)
	}
	put(t, db, Before, newApp(n).objs)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// privateTemp makes the temporary files of this test land in a directory
// it can inspect, and returns it.
func privateTemp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

// encTestObjects returns an application's objects plus a ConfigMap and a
// Secret with recognisable names and values, and the strings that must not
// be readable in an encrypted file.
func encTestObjects() ([]*unstructured.Unstructured, []string) {
	objs := newApp(40).objs
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "payments-gateway-settings", "namespace": "prod-payments", "resourceVersion": "7"},
		"data":     map[string]any{"DATABASE_URL": "postgres://payments.internal.example:5432/ledger"},
	}}
	s, _ := sealTestSecret("payments-db-credentials", "hunter2-encrypted")
	objs = append(objs, cm, s)
	secrets := []string{"payments-gateway-settings", "prod-payments", "postgres://payments.internal.example:5432/ledger", "DATABASE_URL", "payments-db-credentials"}
	for _, u := range objs[:40] {
		secrets = append(secrets, u.GetName())
		if d, ok := u.Object["data"].(map[string]any); ok {
			for _, v := range d {
				secrets = append(secrets, v.(string))
			}
		}
	}
	return objs, secrets
}

func TestEncryptedRoundTrip(t *testing.T) {
	privateTemp(t)
	key := fileKey(3)
	path := filepath.Join(t.TempDir(), DefaultPath)
	objs, secrets := encTestObjects()

	db, err := Open(path, encOpts(key, false))
	if err != nil {
		t.Fatal(err)
	}
	m := put(t, db, Before, objs)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := "snapply-encrypted-store v1 key-id=" + KeyID(key) + "\nage-encryption.org/v1\n"
	if !bytes.HasPrefix(raw, []byte(wantHeader)) {
		t.Errorf("file starts with %q, want %q", raw[:min(len(raw), 80)], wantHeader)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, want 0600", fi.Mode().Perm())
	}
	for _, s := range secrets {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the encrypted file holds %q", s)
		}
	}
	// The objects are compressed in a plain store too, so the strings are
	// not found in that either: also look for every key and value of the
	// plain store (the compressed objects, the snapshot entries) as they
	// are in its file, and none may be in the encrypted one.
	plain := filepath.Join(t.TempDir(), "plain.db")
	if err := DecryptFile(path, plain, key); err != nil {
		t.Fatal(err)
	}
	clear, _ := os.ReadFile(plain)
	pieces := storePieces(t, plain)
	if len(pieces) < len(objs) {
		t.Fatalf("%d keys and values in the plain store, want at least %d", len(pieces), len(objs))
	}
	for _, p := range pieces {
		if !bytes.Contains(clear, p) {
			t.Fatalf("the plain file does not hold a value of its store as is: the search proves nothing")
		}
		if bytes.Contains(raw, p) {
			t.Errorf("the encrypted file holds %q of the plain store", p[:min(len(p), 40)])
		}
	}
	if bytes.Contains(raw, key) || bytes.Contains(raw, []byte(hex.EncodeToString(key))) {
		t.Error("the encrypted file holds the key")
	}

	db, err = Open(path, encOpts(key, true))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	snap, err := db.Snapshot(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Entries) != len(objs) {
		t.Errorf("snapshot has %d entries, want %d", len(snap.Entries), len(objs))
	}
	got, err := db.Unsealed(secretID(t, db, m, "payments-db-credentials"))
	if err != nil {
		t.Fatalf("Unsealed() in an encrypted store: %v", err)
	}
	if pw, _, _ := unstructured.NestedString(got.Object, "data", "password"); pw == "" {
		t.Error("the unsealed Secret has no password")
	}
}

// storePieces returns the keys and values of 16 bytes or more of every
// bucket of the plain store at path.
func storePieces(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var out [][]byte
	b.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, bk *bolt.Bucket) error {
			return bk.ForEach(func(k, v []byte) error {
				for _, p := range [][]byte{k, v} {
					if len(p) >= 16 {
						out = append(out, bytes.Clone(p))
					}
				}
				return nil
			})
		})
	})
	return out
}

func TestEncryptedReadOnlyAndUnchangedLeaveTheFile(t *testing.T) {
	privateTemp(t)
	key := fileKey(4)
	path := encryptedStore(t, key, 5)
	before, _ := os.ReadFile(path)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(path, old, old)

	for _, readOnly := range []bool{true, false} {
		db, err := Open(path, encOpts(key, readOnly))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Snapshots(); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		after, _ := os.ReadFile(path)
		fi, _ := os.Stat(path)
		if !bytes.Equal(before, after) || !fi.ModTime().Equal(old) {
			t.Errorf("open (read-only %v) and close without a change rewrote the file", readOnly)
		}
	}
}

func TestEncryptedPlainCopy(t *testing.T) {
	tmp := privateTemp(t)
	key := fileKey(5)
	path := filepath.Join(t.TempDir(), DefaultPath)
	db, err := Open(path, encOpts(key, false))
	if err != nil {
		t.Fatal(err)
	}
	// While open, the plain store is in a private directory.
	dirs, _ := filepath.Glob(filepath.Join(tmp, "snapply-store-*"))
	if len(dirs) != 1 {
		t.Fatalf("temporary directories %v, want one snapply-store-*", dirs)
	}
	if fi, _ := os.Stat(dirs[0]); fi.Mode().Perm() != 0o700 {
		t.Errorf("directory of the plain copy has mode %v, want 0700", fi.Mode().Perm())
	}
	if fi, err := os.Stat(filepath.Join(dirs[0], DefaultPath)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("plain copy: %v, mode %v, want 0600", err, fi.Mode().Perm())
	}
	put(t, db, Before, newApp(3).objs)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	checkNoTemp(t, tmp, "after Close")

	// Every failed open removes it too.
	for name, opts := range map[string]Options{"wrong key": encOpts(fileKey(6), false), "read-only wrong key": encOpts(fileKey(6), true)} {
		if _, err := Open(path, opts); err == nil {
			t.Fatalf("%s: Open succeeded", name)
		}
		checkNoTemp(t, tmp, name)
	}
	garbage := filepath.Join(t.TempDir(), "garbage.db")
	os.WriteFile(garbage, bytes.Repeat([]byte("not a store "), 1000), 0o600)
	if _, err := Open(garbage, encOpts(key, false)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Open(garbage) error = %v, want ErrCorrupt", err)
	}
	checkNoTemp(t, tmp, "a file that is not a store")
}

// checkNoTemp fails when a plain copy is left in tmp.
func checkNoTemp(t *testing.T, tmp, when string) {
	t.Helper()
	if left, _ := filepath.Glob(filepath.Join(tmp, "snapply-store-*")); len(left) > 0 {
		t.Errorf("%s: plain copies left: %v", when, left)
	}
}

func TestEncryptedKeyErrors(t *testing.T) {
	privateTemp(t)
	key := fileKey(8)
	path := encryptedStore(t, key, 2)
	wrong := fileKey(9)
	tests := []struct {
		name    string
		key     []byte
		wantIs  error
		wantMsg string
	}{
		{"missing key", nil, ErrEncrypted, "store: " + path + ": the store file is encrypted with key ID " + KeyID(key) + ", and no store key was given"},
		{"wrong key", wrong, ErrWrongFileKey, "store: " + path + ": the store key does not open it: the file needs key ID " + KeyID(key) + ", the key given has key ID " + KeyID(wrong)},
	}
	for _, tt := range tests {
		for _, readOnly := range []bool{true, false} {
			_, err := Open(path, encOpts(tt.key, readOnly))
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("%s: Open() error = %v, want %v", tt.name, err, tt.wantIs)
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("%s: Open() error\n got: %s\nwant: %s", tt.name, err, tt.wantMsg)
			}
			if strings.Contains(err.Error(), hex.EncodeToString(key)) || strings.Contains(err.Error(), hex.EncodeToString(wrong)) {
				t.Errorf("%s: the error holds key material: %s", tt.name, err)
			}
		}
	}
	if id, ok, err := EncryptedKeyID(path); err != nil || !ok || id != KeyID(key) {
		t.Errorf("EncryptedKeyID() = %q, %v, %v; want %q, true", id, ok, err, KeyID(key))
	}
}

func TestEncryptedDamaged(t *testing.T) {
	privateTemp(t)
	key := fileKey(10)
	path := encryptedStore(t, key, 2)
	raw, _ := os.ReadFile(path)
	for name, b := range map[string][]byte{
		"a flipped byte": func() []byte { c := bytes.Clone(raw); c[len(c)-100] ^= 1; return c }(),
		"cut short":      raw[:len(raw)/2],
		"bad key ID":     append([]byte("snapply-encrypted-store v1 key-id=xyz\n"), raw[60:]...),
	} {
		bad := filepath.Join(t.TempDir(), "bad.db")
		os.WriteFile(bad, b, 0o600)
		if _, err := Open(bad, encOpts(key, true)); !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Open() error = %v, want one line with ErrCorrupt", name, err)
		}
	}
}

func TestEncryptedWritesBackPlain(t *testing.T) {
	privateTemp(t)
	key := fileKey(11)
	path := filepath.Join(t.TempDir(), DefaultPath)
	db, err := Open(path, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	put(t, db, Before, newApp(2).objs)
	db.Close()
	// A plain store opened for writing with a key is encrypted on Close;
	// read-only, it is left plain.
	db, err = Open(path, encOpts(key, true))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, enc, _ := EncryptedKeyID(path); enc {
		t.Error("a read-only open encrypted the file")
	}
	db, err = Open(path, encOpts(key, false))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if id, enc, _ := EncryptedKeyID(path); !enc || id != KeyID(key) {
		t.Errorf("after a writable open with a key: encrypted %v with key ID %q, want %q", enc, id, KeyID(key))
	}
}

func TestEncryptDecryptRekeyStore(t *testing.T) {
	tmp := privateTemp(t)
	oldKey, newKey := fileKey(12), fileKey(13)
	path := filepath.Join(t.TempDir(), DefaultPath)
	db, err := Open(path, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	m := put(t, db, Before, newApp(4).objs)
	db.Close()
	opens := func(key []byte) error {
		o := DefaultOptions()
		o.FileKey, o.ReadOnly = key, true
		db, err := Open(path, o)
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.Snapshot(m.ID)
		return err
	}

	if err := DecryptStore(path, oldKey, time.Second); err == nil || err.Error() != "store: "+path+": not an encrypted store file" {
		t.Errorf("DecryptStore(plain) error = %v", err)
	}
	if err := RekeyStore(path, oldKey, newKey, time.Second); err == nil {
		t.Error("RekeyStore(plain) succeeded")
	}
	if err := EncryptStore(path, oldKey, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := opens(nil); !errors.Is(err, ErrEncrypted) {
		t.Errorf("after encrypt, no key: %v, want ErrEncrypted", err)
	}
	if err := opens(oldKey); err != nil {
		t.Errorf("after encrypt, the key: %v", err)
	}
	if err := EncryptStore(path, newKey, time.Second); err == nil || !strings.Contains(err.Error(), "already encrypted, with key ID "+KeyID(oldKey)) {
		t.Errorf("EncryptStore(encrypted) error = %v", err)
	}

	if err := RekeyStore(path, newKey, oldKey, time.Second); !errors.Is(err, ErrWrongFileKey) {
		t.Errorf("RekeyStore with the wrong old key: %v, want ErrWrongFileKey", err)
	}
	if err := RekeyStore(path, oldKey, newKey, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := opens(oldKey); !errors.Is(err, ErrWrongFileKey) {
		t.Errorf("after rekey, the old key: %v, want ErrWrongFileKey", err)
	}
	if err := opens(newKey); err != nil {
		t.Errorf("after rekey, the new key: %v", err)
	}

	if err := DecryptStore(path, newKey, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := opens(nil); err != nil {
		t.Errorf("after decrypt, no key: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("decrypted file mode = %v, want 0600", fi.Mode().Perm())
	}
	checkNoTemp(t, tmp, "after encrypt, rekey and decrypt")

	// A file that is not a store is refused and left as it is.
	garbage := filepath.Join(t.TempDir(), "garbage.db")
	content := bytes.Repeat([]byte("not a store "), 1000)
	os.WriteFile(garbage, content, 0o600)
	if err := EncryptStore(garbage, oldKey, time.Second); !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), tmp) {
		t.Errorf("EncryptStore(garbage) error = %v, want ErrCorrupt naming the file", err)
	}
	if got, _ := os.ReadFile(garbage); !bytes.Equal(got, content) {
		t.Error("EncryptStore(garbage) changed the file")
	}
	if err := EncryptStore(filepath.Join(tmp, "missing.db"), oldKey, time.Second); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("EncryptStore(missing) error = %v, want not exist", err)
	}
	checkNoTemp(t, tmp, "after the failures")
}
