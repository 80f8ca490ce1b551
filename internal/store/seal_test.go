package store

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/crypto/scrypt"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/secret"
)

func TestKeyFromEnv(t *testing.T) {
	key := bytes.Repeat([]byte{0xa5}, 32)
	key[0], key[31] = 0x01, 0xfe
	// A passphrase is stretched with scrypt (N=2^15, r=8, p=1) and a fixed
	// salt: the same on every machine, and costly to guess.
	stretch := func(p string) []byte {
		k, err := scrypt.Key([]byte(p), []byte("snapply store key v1"), 1<<15, 8, 1, 32)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	pass := stretch("correct horse battery staple")
	nonHex := strings.Repeat("z", 64)
	nonHexSum := stretch(nonHex)
	short := stretch(base64.StdEncoding.EncodeToString(key[:16]))
	tests := []struct {
		name    string
		value   string
		want    []byte
		wantErr bool
	}{
		{name: "unset", value: "", want: nil},
		{name: "hex", value: hex.EncodeToString(key), want: key},
		{name: "upper-case hex with a newline", value: strings.ToUpper(hex.EncodeToString(key)) + "\n", want: key},
		{name: "base64", value: base64.StdEncoding.EncodeToString(key), want: key},
		{name: "base64 url without padding", value: base64.RawURLEncoding.EncodeToString(key), want: key},
		{name: "passphrase", value: "correct horse battery staple", want: pass},
		{name: "passphrase with surrounding space", value: "  correct horse battery staple\n", want: pass},
		{name: "64 characters that are not hex", value: nonHex, want: nonHexSum},
		{name: "base64 of 16 bytes is a passphrase", value: base64.StdEncoding.EncodeToString(key[:16]), want: short},
		{name: "blank", value: " \n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := KeyFromEnv(func(name string) string {
				if name != KeyEnv {
					t.Errorf("KeyFromEnv read %q, want %q", name, KeyEnv)
				}
				return tt.value
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("KeyFromEnv() error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("KeyFromEnv() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// sealTestSecret returns a Secret with every kind of value redaction
// replaces, and the clear values that must never be in the file.
func sealTestSecret(name, password string) (*unstructured.Unstructured, []string) {
	cert := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC-" + name + "\n-----END PRIVATE KEY-----\n"
	token := "ghp_sealtesttoken0123456789-" + name
	lastApplied := `{"apiVersion":"v1","kind":"Secret","stringData":{"password":"` + password + `"}}`
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{
			"name": name, "namespace": "prod", "resourceVersion": "42",
			"labels":      map[string]any{"app": "db"},
			"annotations": map[string]any{secret.LastAppliedAnnotation: lastApplied, "team": "payments"},
		},
		"data": map[string]any{
			"password": base64.StdEncoding.EncodeToString([]byte(password)),
			"tls.key":  base64.StdEncoding.EncodeToString([]byte(cert)),
			"empty":    "",
		},
		"stringData": map[string]any{"token": token, "port": int64(5432)},
	}}
	values := append(secret.Values(u), "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC-"+name)
	return u, values
}

// fileHaystack returns the raw file at path and every blob decompressed.
func fileHaystack(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	all := [][]byte{raw}
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketBlobs).ForEach(func(k, v []byte) error {
			d, err := decompress(v)
			if err != nil {
				t.Errorf("blob %x: %v", k, err)
			}
			all = append(all, d)
			return nil
		})
	})
	return bytes.Join(all, []byte{0})
}

// sealedEntries counts the entries of the sealed bucket of the file.
func sealedEntries(t *testing.T, path string) int {
	t.Helper()
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	n := 0
	b.View(func(tx *bolt.Tx) error {
		if s := tx.Bucket(bucketSealed); s != nil {
			n = s.Stats().KeyN
		}
		return nil
	})
	return n
}

func checkNoClearValues(t *testing.T, path string, values []string) {
	t.Helper()
	all := fileHaystack(t, path)
	for _, v := range values {
		for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
			if bytes.Contains(all, []byte(form)) {
				t.Errorf("the store file holds the clear value %q (as %q)", v, form)
			}
		}
	}
}

// secretID returns the object ID of the Secret name in snapshot m.
func secretID(t *testing.T, db *DB, m Meta, name string) ID {
	t.Helper()
	s, err := db.Snapshot(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Entries {
		if e.Ref.Kind == "Secret" && e.Ref.Name == name {
			return e.ID
		}
	}
	t.Fatalf("snapshot %s has no secret %s", m.ID, name)
	return ID{}
}

func openSealed(t *testing.T, path string, key []byte, readOnly bool) *DB {
	t.Helper()
	opts := DefaultOptions()
	opts.SealKey, opts.ReadOnly = key, readOnly
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSealWithoutKey(t *testing.T) {
	db := openTest(t)
	s, values := sealTestSecret("db", "hunter2-without-key")
	m := put(t, db, Before, append(newApp(5).objs, s))
	id := secretID(t, db, m, "db")
	if _, err := db.Unsealed(id); !errors.Is(err, ErrNotSealed) {
		t.Errorf("Unsealed() error = %v, want ErrNotSealed", err)
	}
	db.Close()
	if n := sealedEntries(t, db.Path()); n != 0 {
		t.Errorf("%d sealed entries without a key, want 0", n)
	}
	checkNoClearValues(t, db.Path(), values)
}

func TestSealRoundTrip(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	path := filepath.Join(t.TempDir(), DefaultPath)
	db := openSealed(t, path, key, false)
	s, values := sealTestSecret("db", "hunter2-sealed")
	other, otherValues := sealTestSecret("api", "hunter3-sealed")
	app := newApp(5).objs
	m1 := put(t, db, Before, append(append([]*unstructured.Unstructured{}, app...), s, other))
	// The same Secret in a second snapshot: one object, one sealed entry.
	m2 := put(t, db, After, append(append([]*unstructured.Unstructured{}, app...), s))
	id := secretID(t, db, m1, "db")
	if id2 := secretID(t, db, m2, "db"); id2 != id {
		t.Errorf("the same Secret has IDs %s and %s", id, id2)
	}
	// The ID is that of the redacted Secret, as without a key.
	n, _ := Normalize(db.Redactor(), s)
	if want := Hash(n.Object); id != want {
		t.Errorf("sealed Secret's ID = %s, want the redacted Secret's %s", id, want)
	}
	cmID := objectIDOfKind(t, db, m1, "ConfigMap")
	db.Close()
	if n := sealedEntries(t, path); n != 2 {
		t.Errorf("%d sealed entries, want 2 (one per distinct Secret)", n)
	}
	checkNoClearValues(t, path, append(values, otherValues...))

	db = openSealed(t, path, key, true)
	got, err := db.Unsealed(id)
	if err != nil {
		t.Fatal(err)
	}
	want := s.DeepCopy()
	unstructured.RemoveNestedField(want.Object, "metadata", "resourceVersion")
	if diff := cmp.Diff(want.Object, got.Object); diff != "" {
		t.Errorf("Unsealed() mismatch (-want +got):\n%s", diff)
	}
	if _, err := db.Unsealed(cmID); !errors.Is(err, ErrNotSealed) {
		t.Errorf("Unsealed(ConfigMap) error = %v, want ErrNotSealed", err)
	}
}

// objectIDOfKind returns the ID of the first object of kind in snapshot m.
func objectIDOfKind(t *testing.T, db *DB, m Meta, kind string) ID {
	t.Helper()
	s, err := db.Snapshot(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Entries {
		if e.Ref.Kind == kind {
			return e.ID
		}
	}
	t.Fatalf("snapshot %s has no %s", m.ID, kind)
	return ID{}
}

func TestUnsealedWrongOrMissingKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), DefaultPath)
	db := openSealed(t, path, bytes.Repeat([]byte{1}, 32), false)
	s, _ := sealTestSecret("x", "hunter2-wrong-key")
	s.SetNamespace("y")
	id := secretID(t, db, put(t, db, Before, []*unstructured.Unstructured{s}), "x")
	db.Close()

	tests := []struct {
		name    string
		key     []byte
		wantErr error
		wantMsg string
	}{
		{"wrong key", bytes.Repeat([]byte{2}, 32), ErrWrongKey, "store: " + path + ": sealed values of secret/x -n y: wrong SNAPPLY_STORE_KEY"},
		{"no key", nil, ErrNoKey, "store: " + path + ": sealed values of secret/x -n y: no SNAPPLY_STORE_KEY given; the values were sealed with one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openSealed(t, path, tt.key, true)
			_, err := db.Unsealed(id)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Unsealed() error = %v, want %v", err, tt.wantErr)
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("Unsealed() error = %q, want %q", err, tt.wantMsg)
			}
		})
	}
}

// TestSealNewKey: a Secret sealed under one key and stored again under
// another is sealed anew, so that the new key opens it.
func TestSealNewKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), DefaultPath)
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	db := openSealed(t, path, oldKey, false)
	s, _ := sealTestSecret("db", "hunter2-rotated")
	id := secretID(t, db, put(t, db, Before, []*unstructured.Unstructured{s}), "db")
	db.Close()

	db = openSealed(t, path, newKey, false)
	if _, err := db.Unsealed(id); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("Unsealed() before sealing again: error = %v, want ErrWrongKey", err)
	}
	put(t, db, After, []*unstructured.Unstructured{s})
	if _, err := db.Unsealed(id); err != nil {
		t.Errorf("Unsealed() after sealing under the new key: %v", err)
	}
}

func TestSealKeyLength(t *testing.T) {
	opts := DefaultOptions()
	opts.SealKey = []byte("too short")
	path := filepath.Join(t.TempDir(), DefaultPath)
	if _, err := Open(path, opts); err == nil || !strings.Contains(err.Error(), "want 32 bytes") {
		t.Errorf("Open() with a 9-byte key: error = %v, want one about its length", err)
	}
}
