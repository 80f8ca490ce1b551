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
	"time"

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
// derived from the key with HKDF-SHA256. Its work factor is low (2^10)
// because the key is 32 bytes that are random or already stretched:
// KeyFromVar runs a passphrase through scrypt (2^15) before it is a key, so
// the key ID, which is cheaper to test than the age header, gives no
// shortcut to guessing a passphrase either.
//
// A file is written back through a temporary file in its directory that is
// synced and then renamed over it (and the directory synced): a crash
// leaves the previous file or the new one, never a mix.

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
	if err := checkFileKey(src, id, key); err != nil {
		return err
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
		// The key ID matched: the file, not the key, is wrong.
		return fmt.Errorf("store: %s: %w: encrypted store: %v", src, ErrCorrupt, err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("store: %s: %w", dst, unwrapPath(err))
	}
	if _, err := io.Copy(out, ar); err != nil {
		out.Close()
		os.Remove(dst)
		return fmt.Errorf("store: %s: %w: encrypted store: %v", src, ErrCorrupt, err)
	}
	return out.Close()
}

// syncDir makes a rename in dir durable (best effort: not every system
// syncs directories).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// checkFileKey says, in one line naming the file and the key IDs, that an
// encrypted file with key ID id does not open without a key (ErrEncrypted)
// or with key (ErrWrongFileKey).
func checkFileKey(path, id string, key []byte) error {
	if len(key) == 0 {
		return fmt.Errorf("store: %s: %w with key ID %s, and no store key was given", path, ErrEncrypted, id)
	}
	if given := KeyID(key); given != id {
		return fmt.Errorf("store: %s: %w: the file needs key ID %s, the key given has key ID %s", path, ErrWrongFileKey, id, given)
	}
	return nil
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
	syncDir(filepath.Dir(path))
	return giveToDirOwner(path)
}

// EncryptStore encrypts the plain store file at path in place with key.
// It refuses a file that is missing, already encrypted, or not a store.
func EncryptStore(path string, key []byte, timeout time.Duration) error {
	return convertStore(path, timeout, func(isEnc bool, id, plain string) error {
		if isEnc {
			return fmt.Errorf("store: %s: already encrypted, with key ID %s (rekey changes the key)", path, id)
		}
		return copyPlain(path, plain)
	}, func(plain string) error {
		return EncryptFile(plain, path, key)
	})
}

// DecryptStore replaces the encrypted store file at path with its plain
// store, given the key it was written with.
func DecryptStore(path string, key []byte, timeout time.Duration) error {
	return convertStore(path, timeout, func(isEnc bool, id, plain string) error {
		if !isEnc {
			return fmt.Errorf("store: %s: not an encrypted store file", path)
		}
		return DecryptFile(path, plain, key)
	}, func(plain string) error {
		return replaceFile(path, func(w io.Writer) error {
			f, err := os.Open(plain)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(w, f)
			return err
		})
	})
}

// RekeyStore re-encrypts the encrypted store file at path, written with
// oldKey, with newKey; afterwards only newKey opens it. The sealed Secret
// values inside stay sealed with the key they were sealed with.
func RekeyStore(path string, oldKey, newKey []byte, timeout time.Duration) error {
	return convertStore(path, timeout, func(isEnc bool, id, plain string) error {
		if !isEnc {
			return fmt.Errorf("store: %s: not an encrypted store file (encrypt it instead)", path)
		}
		return DecryptFile(path, plain, oldKey)
	}, func(plain string) error {
		return EncryptFile(plain, path, newKey)
	})
}

// convertStore rewrites the existing store file at path, locked against
// other snapply processes: read makes the plain store in a private
// temporary directory, which must open as a store, and write replaces
// path from it. The plain copy is removed in any case.
func convertStore(path string, timeout time.Duration, read func(isEnc bool, id, plain string) error, write func(plain string) error) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("store: %s: %w", path, unwrapPath(err))
	}
	if fi.IsDir() {
		return fmt.Errorf("store: %s: is a directory", path)
	}
	lock, err := lockPath(path, false, timeout)
	if err != nil {
		return err
	}
	defer lock.Close()
	dir, err := os.MkdirTemp("", "snapply-store-")
	if err != nil {
		return fmt.Errorf("store: %s: %w", path, err)
	}
	defer os.RemoveAll(dir)
	plain := filepath.Join(dir, filepath.Base(path))
	id, isEnc, err := EncryptedKeyID(path)
	if err != nil {
		return err
	}
	if err := read(isEnc, id, plain); err != nil {
		return err
	}
	db, err := openPlain(plain, Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		return renamed(err, plain, path)
	}
	if err := db.Close(); err != nil {
		return err
	}
	return write(plain)
}
