package store

import (
	"bufio"
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"filippo.io/age"
)

// Whole-file encryption. A store file that leaves the machine (a workflow
// artifact) holds every object of the managed namespaces; with a store key
// it is written encrypted as a whole with age (filippo.io/age), and only
// decrypted into a private temporary file while snapply uses it.
//
// The format is one plain header line, then an age file:
//
//	snapply-encrypted-store v1 key-id=0123456789abcdef\n
//	age-encryption.org/v1 ...
//
// The key ID is the first 16 hex characters of HMAC-SHA256(key,
// "snapply store key id v1"): it names the key a file needs without
// revealing it. The age file has one scrypt recipient whose passphrase is
// derived from the key with HKDF-SHA256; its work factor is low because the
// key is 32 bytes of entropy (a passphrase key is only as strong as the
// passphrase, see KeyFromEnv).

// encMagic starts the header line of an encrypted store file.
const encMagic = "snapply-encrypted-store v1 key-id="

// encWorkFactor is the scrypt work factor (log2 N) of the age recipient.
const encWorkFactor = 10

// ErrEncrypted is returned (wrapped, with the key ID) when a store file is
// encrypted and no key was given.
var ErrEncrypted = errors.New("the store file is encrypted")

// ErrWrongFileKey is returned (wrapped) when an encrypted store file does
// not open with the key given.
var ErrWrongFileKey = errors.New("the store key does not open it")

// KeyID names key without revealing it: what an encrypted store file
// records of the key it needs.
func KeyID(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("snapply store key id v1"))
	return hex.EncodeToString(m.Sum(nil))[:16]
}

// EncryptedKeyID returns the key ID of the encrypted store file at path,
// and false when the file is not encrypted (or does not exist).
func EncryptedKeyID(path string) (string, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("store: %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	id, ok, err := readHeader(bufio.NewReader(f))
	if err != nil {
		return "", false, fmt.Errorf("store: %s: %w", path, err)
	}
	return id, ok, nil
}

// readHeader reads the header line of an encrypted store file from r, and
// false (having read a few bytes) when it is not one.
func readHeader(r *bufio.Reader) (string, bool, error) {
	head, err := r.Peek(len(encMagic))
	if err != nil || !bytes.Equal(head, []byte(encMagic)) {
		return "", false, nil
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return "", false, corruptHeader()
	}
	id := strings.TrimSuffix(strings.TrimPrefix(line, encMagic), "\n")
	if len(id) != 16 || strings.Trim(id, "0123456789abcdef") != "" {
		return "", false, corruptHeader()
	}
	return id, true, nil
}

func corruptHeader() error { return fmt.Errorf("%w: malformed encrypted-store header", ErrCorrupt) }

// agePassphrase is the passphrase of the age recipient for key.
func agePassphrase(key []byte) (string, error) {
	k, err := hkdf.Key(sha256.New, key, nil, "snapply store file v1", 32)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(k), nil
}

// EncryptFile writes src, a plain store file, encrypted under key to dst:
// through a temporary file in dst's directory that replaces dst only once
// it is complete, so that a failure leaves dst as it was. dst gets src's
// mode (0600).
func EncryptFile(src, dst string, key []byte) error {
	if len(key) != SealKeySize {
		return fmt.Errorf("store: %s: store key: want %d bytes, got %d", dst, SealKeySize, len(key))
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("store: %s: %w", src, unwrapPath(err))
	}
	defer in.Close()
	pass, err := agePassphrase(key)
	if err != nil {
		return err
	}
	rcpt, err := age.NewScryptRecipient(pass)
	if err != nil {
		return err
	}
	rcpt.SetWorkFactor(encWorkFactor)
	return replaceFile(dst, func(w io.Writer) error {
		if _, err := io.WriteString(w, encMagic+KeyID(key)+"\n"); err != nil {
			return err
		}
		aw, err := age.Encrypt(w, rcpt)
		if err != nil {
			return err
		}
		if _, err := io.Copy(aw, in); err != nil {
			return err
		}
		return aw.Close()
	})
}

// DecryptFile writes the plain store of the encrypted file src to dst
// (mode 0600). It fails with ErrEncrypted without a key, and
// ErrWrongFileKey when key is not the one src was written with; the errors
// name the key ID the file needs.
func DecryptFile(src, dst string, key []byte) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("store: %s: %w", src, unwrapPath(err))
	}
	defer in.Close()
	br := bufio.NewReader(in)
	id, ok, err := readHeader(br)
	if err != nil {
		return fmt.Errorf("store: %s: %w", src, err)
	}
	if !ok {
		return fmt.Errorf("store: %s: not an encrypted store file", src)
	}
	if len(key) == 0 {
		return fmt.Errorf("store: %s: %w with key %s; set %s (or the variable --store-key-env names) to the key it was written with", src, ErrEncrypted, id, KeyEnv)
	}
	if KeyID(key) != id {
		return fmt.Errorf("store: %s: %w: it was written with key %s, the key given is %s", src, ErrWrongFileKey, id, KeyID(key))
	}
	pass, err := agePassphrase(key)
	if err != nil {
		return err
	}
	ident, err := age.NewScryptIdentity(pass)
	if err != nil {
		return err
	}
	ident.SetMaxWorkFactor(encWorkFactor)
	ar, err := age.Decrypt(br, ident)
	if err != nil {
		return fmt.Errorf("store: %s: %w (key %s): %v", src, ErrWrongFileKey, id, err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("store: %s: %w", dst, unwrapPath(err))
	}
	if _, err := io.Copy(out, ar); err != nil {
		out.Close()
		return fmt.Errorf("store: %s: %w: %v", src, ErrCorrupt, err)
	}
	return out.Close()
}

// replaceFile writes path through write into a temporary file next to it,
// synced, then renames it over path.
func replaceFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("store: %s: %w", path, unwrapPath(err))
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err := write(bw); err != nil {
		tmp.Close()
		return fmt.Errorf("store: %s: encrypt: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("store: %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("store: %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("store: %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("store: %s: %w", path, unwrapPath(err))
	}
	return giveToDirOwner(path)
}
