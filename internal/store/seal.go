package store

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/scrypt"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/secret"
)

// Sealing: with a store key (Options.SealKey, from SNAPPLY_STORE_KEY),
// PutSnapshot keeps, besides the redacted Secret that the objects bucket
// holds, the Secret's clear values encrypted in the bucket
//
//	sealed     object ID of the redacted Secret (32 bytes) -> byte 1 (the
//	           version), a 12-byte random nonce, then the AES-256-GCM
//	           sealing of a JSON object holding the Secret's "data" and
//	           "stringData" fields and its kubectl last-applied annotation
//	           ("lastApplied"), each as the Secret had it, with the ID as
//	           additional data
//
// The bucket is created by the first snapshot that seals something. Object
// IDs, and so the deduplication of objects, do not depend on the key: they
// are computed from the redacted Secret as without one. As equal IDs mean
// equal values, a Secret sealed once is not sealed again, unless its entry
// does not open with the current key (it is then sealed anew with it).
//
// The AES key is derived from the store key with HMAC-SHA256, so that the
// store key is used for nothing else. Whoever holds the file but not the
// key learns nothing of the values beyond what the digests already tell.

// KeyEnv is the environment variable that holds the store key.
const KeyEnv = "SNAPPLY_STORE_KEY"

// SealKeySize is the length of Options.SealKey.
const SealKeySize = 32

// Errors of Unsealed that callers can test for with errors.Is.
var (
	// ErrNotSealed: the store holds no sealed values for the object (it was
	// written without a store key, or the object is not a Secret).
	ErrNotSealed = errors.New("values not sealed in the store")
	// ErrNoKey: the store holds sealed values but was opened without a key.
	ErrNoKey = errors.New("no " + KeyEnv + " given; the values were sealed with one")
	// ErrWrongKey: the sealed values do not open with the key given.
	ErrWrongKey = errors.New("wrong " + KeyEnv)
)

var bucketSealed = []byte("sealed")

const (
	sealVersion = 1
	sealAAD     = "snapply sealed secret v1\x00"
	sealKDF     = "snapply store seal key v1"
)

// KeyFromEnv reads the store key from the environment variable KeyEnv
// (SNAPPLY_STORE_KEY) through getenv: KeyFromVar(getenv, KeyEnv).
func KeyFromEnv(getenv func(string) string) ([]byte, error) {
	return KeyFromVar(getenv, KeyEnv)
}

// Passphrase stretching: scrypt with N=2^15, r=8, p=1 (32 MiB, tens of
// milliseconds once per run) and a fixed salt, so that the same passphrase
// gives the same key on every machine.
const (
	passphraseSalt = "snapply store key v1"
	passphraseLogN = 15
)

// KeyFromVar reads the store key from the environment variable name
// through getenv (os.Getenv, or a stub in tests) and returns the 32 bytes
// of Options.SealKey and Options.FileKey, or nil when the variable is
// unset or empty. Surrounding white space is ignored. The value may be:
//
//   - 64 hex characters: the key itself (openssl rand -hex 32);
//   - base64 (standard or URL alphabet, padded or not) of 32 bytes: the
//     key itself (openssl rand -base64 32);
//   - anything else: a passphrase, stretched into the key with scrypt
//     (N=2^15, r=8, p=1). Whoever holds an encrypted store file can test
//     guesses of a passphrase offline, at the cost of one scrypt each: a
//     passphrase is only as strong as it is long and random. Prefer a
//     random key.
//
// A variable that holds only white space is an error, not "no key". The
// errors name the variable, never its value.
func KeyFromVar(getenv func(string) string, name string) ([]byte, error) {
	v := getenv(name)
	if v == "" {
		return nil, nil
	}
	s := strings.TrimSpace(v)
	if s == "" {
		return nil, fmt.Errorf("%s is set but blank: unset it, or set it to 64 hex characters, base64 of 32 bytes, or a passphrase", name)
	}
	if len(s) == 2*SealKeySize {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == SealKeySize {
			return b, nil
		}
	}
	key, err := scrypt.Key([]byte(s), []byte(passphraseSalt), 1<<passphraseLogN, 8, 1, SealKeySize)
	if err != nil {
		return nil, fmt.Errorf("%s: stretch the passphrase: %w", name, err)
	}
	return key, nil
}

// newSealer returns the AEAD that seals values under key, nil for no key.
func newSealer(path string, key []byte) (cipher.AEAD, error) {
	if key == nil {
		return nil, nil
	}
	if len(key) != SealKeySize {
		return nil, fmt.Errorf("store: %s: seal key: want %d bytes, got %d", path, SealKeySize, len(key))
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(sealKDF))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("store: %s: seal key: %w", path, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("store: %s: seal key: %w", path, err)
	}
	return aead, nil
}

// sealedValues is what a sealed entry holds: the fields of a Secret that
// redaction replaces, as the Secret had them. A field the Secret lacks is
// left out.
type sealedValues struct {
	Data        any     `json:"data,omitempty"`
	StringData  any     `json:"stringData,omitempty"`
	LastApplied *string `json:"lastApplied,omitempty"`
}

// clearValues returns the values of Secret u that redaction replaces, in
// the canonical types the store hashes, and whether there are any.
func clearValues(u *unstructured.Unstructured) (sealedValues, bool) {
	var v sealedValues
	if d, ok := u.Object["data"]; ok && d != nil {
		v.Data = canonical(d)
	}
	if d, ok := u.Object["stringData"]; ok && d != nil {
		v.StringData = canonical(d)
	}
	if la, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "annotations", secret.LastAppliedAnnotation); ok && la != nil {
		if s, ok := la.(string); ok {
			s = validUTF8(s)
			v.LastApplied = &s
		}
	}
	return v, v.Data != nil || v.StringData != nil || v.LastApplied != nil
}

// seal keeps the clear values of Secret u, whose redacted form has the ID
// id, sealed in the sealed bucket, unless they are there already under the
// current key.
func (tx *Tx) seal(id ID, u *unstructured.Unstructured) error {
	v, ok := clearValues(u)
	if !ok {
		return nil
	}
	b, err := tx.btx.CreateBucketIfNotExists(bucketSealed)
	if err != nil {
		return fmt.Errorf("sealed values: %w", err)
	}
	if old := b.Get(id[:]); old != nil {
		if _, err := tx.db.open(id, old); err == nil {
			return nil
		}
	}
	plain, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("sealed values: %w", err)
	}
	aead := tx.db.seal
	out := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(plain)+aead.Overhead())
	out[0] = sealVersion
	rand.Read(out[1:])
	out = aead.Seal(out, out[1:], plain, sealAD(id))
	clear(plain)
	if err := b.Put(id[:], out); err != nil {
		return fmt.Errorf("sealed values: %w", err)
	}
	return nil
}

// open decrypts a sealed entry of id; the error is ErrWrongKey when it does
// not open with the key.
func (db *DB) open(id ID, v []byte) ([]byte, error) {
	aead := db.seal
	if len(v) < 1+aead.NonceSize()+aead.Overhead() || v[0] != sealVersion {
		return nil, errors.New("malformed sealed entry")
	}
	plain, err := aead.Open(nil, v[1:1+aead.NonceSize()], v[1+aead.NonceSize():], sealAD(id))
	if err != nil {
		return nil, ErrWrongKey
	}
	return plain, nil
}

func sealAD(id ID) []byte { return append([]byte(sealAAD), id[:]...) }

// Unsealed returns the stored object id, a Secret, with the clear values
// sealed for it put back: its data and stringData as they were, and its
// kubectl last-applied annotation. The error wraps ErrNotSealed when the
// store holds no sealed values for id, ErrNoKey when the store was opened
// without Options.SealKey, ErrWrongKey when they do not open with it, and
// ErrNotFound when the store has no object id. It checks that the values
// are those of the object: redacted again, they give id.
func (db *DB) Unsealed(id ID) (*unstructured.Unstructured, error) {
	var u *unstructured.Unstructured
	var sealed []byte
	err := db.View(func(tx *Tx) error {
		var err error
		if u, err = tx.Object(id); err != nil {
			return err
		}
		if b := tx.bucket(bucketSealed); b != nil {
			sealed = bytes.Clone(b.Get(id[:]))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ref := object.RefOf(u)
	if sealed == nil {
		return nil, fmt.Errorf("store: %s: %s: %w", db.path, ref, ErrNotSealed)
	}
	if db.seal == nil {
		return nil, fmt.Errorf("store: %s: sealed values of %s: %w", db.path, ref, ErrNoKey)
	}
	plain, err := db.open(id, sealed)
	if errors.Is(err, ErrWrongKey) {
		return nil, fmt.Errorf("store: %s: sealed values of %s: %w", db.path, ref, err)
	}
	if err != nil {
		return nil, corrupt(db.path, "sealed values of %s: %v", ref, err)
	}
	defer clear(plain)
	var v struct {
		Data        any     `json:"data"`
		StringData  any     `json:"stringData"`
		LastApplied *string `json:"lastApplied"`
	}
	// apimachinery's decoder gives integers as int64, as Object does.
	if err := utiljson.Unmarshal(plain, &v); err != nil {
		return nil, corrupt(db.path, "sealed values of %s: %v", ref, err)
	}
	if v.Data != nil {
		u.Object["data"] = v.Data
	}
	if v.StringData != nil {
		u.Object["stringData"] = v.StringData
	}
	if v.LastApplied != nil {
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[secret.LastAppliedAnnotation] = *v.LastApplied
		u.SetAnnotations(ann)
	}
	if n, _ := Normalize(db.redactor, u); Hash(n.Object) != id {
		return nil, corrupt(db.path, "sealed values of %s do not match the stored object", ref)
	}
	return u, nil
}
