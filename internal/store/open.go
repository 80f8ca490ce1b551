package store

import (
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/snapply/snapply/internal/secret"
)

// DefaultPath is the file name of the store when none is given.
const DefaultPath = "snapply.db"

// schemaMajor is the schema version this code writes and the newest major
// version it reads.
const schemaMajor = 1

// Bucket names and keys of the meta bucket.
var (
	bucketMeta      = []byte("meta")
	bucketObjects   = []byte("objects")
	bucketBlobs     = []byte("blobs")
	bucketSnapshots = []byte("snapshots")
	bucketRecords   = []byte("records")

	allBuckets = [][]byte{bucketMeta, bucketObjects, bucketBlobs, bucketSnapshots, bucketRecords}

	keySchema       = []byte("schema")
	keyRedactionKey = []byte("redaction-key")
	keyCreatedBy    = []byte("created-by")
	keyCreated      = []byte("created")
)

// Options configure Open.
type Options struct {
	// ReadOnly opens the store for reading only, with a lock shared with
	// other readers. The file must exist.
	ReadOnly bool
	// Timeout is how long Open waits for another process to release the
	// file before it fails with ErrLocked. Zero waits for ever.
	Timeout time.Duration
	// ToolVersion is the snapply version recorded in a new store and in
	// snapshots that do not name one. Empty means the version of the main
	// module from the build information.
	ToolVersion string
	// SealKey, 32 bytes, makes PutSnapshot also keep each Secret's clear
	// values sealed with AES-256-GCM, so that Unsealed can give them back
	// (a rollback restores them). Nil keeps only digests. See KeyFromEnv.
	SealKey []byte

	// FileKey, 32 bytes (the store key, like SealKey), makes the file
	// encrypted as a whole (see EncryptFile): an encrypted file is
	// decrypted into a private temporary file, and a store opened for
	// writing is written back encrypted by Close, also when it was plain.
	// An encrypted file cannot be opened without it.
	FileKey []byte
	// pageSize overrides the bbolt page size of a new file (tests).
	pageSize int
}

// DefaultOptions returns the options of a writable store that waits five
// seconds for a lock.
func DefaultOptions() Options {
	return Options{Timeout: 5 * time.Second}
}

// DB is an open store. Its methods are safe for concurrent use; like bbolt,
// it allows many readers and one writer at a time.
type DB struct {
	// enc is set when the file at path is used through a plain copy.
	enc         *encrypted
	path        string
	bolt        *bolt.DB
	readOnly    bool
	redactor    *secret.Redactor
	toolVersion string
	// seal seals and opens Secret values; nil without Options.SealKey.
	seal cipher.AEAD
}

// Open opens the store at path, creating it (mode 0600) when it does not
// exist and opts.ReadOnly is not set. It refuses, with a one-line error, a
// file that is not a snapply store or is damaged (ErrCorrupt), a store
// written by a newer major schema (ErrNewerSchema), and a file that another
// process holds for longer than opts.Timeout (ErrLocked).
//
// Before bbolt reads a file that already exists, Open checks the structure
// of every page of it under a shared lock, which reads the whole file.
func Open(path string, opts Options) (*DB, error) {
	id, encryptedFile, err := EncryptedKeyID(path)
	if err != nil {
		return nil, err
	}
	if !encryptedFile && (opts.FileKey == nil || opts.ReadOnly) {
		return openPlain(path, opts)
	}
	if !encryptedFile && !opts.ReadOnly {
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			return nil, fmt.Errorf("store: %s: is a directory", path)
		}
	}
	if encryptedFile {
		if err := checkFileKey(path, id, opts.FileKey); err != nil {
			return nil, err
		}
	}
	return openEncrypted(path, opts)
}

// encrypted is the state of a store used through a plain copy.
type encrypted struct {
	path  string   // the encrypted file
	dir   string   // the private directory of the plain copy
	lock  *os.File // held on path while open
	owner *os.File // held on dir's owner file while open (sweepStale)
	key   []byte
	// wasEncrypted: the file was encrypted when opened; with txID, the
	// last transaction then, Close leaves a file nothing changed as it is.
	wasEncrypted bool
	txID         int
}

// tempPattern names the private directories of plain copies.
const tempPattern = "snapply-store-"

// openEncrypted opens the store at path (encrypted, or plain or missing
// when it is to be written encrypted) through a plain copy in a private
// temporary directory.
func openEncrypted(path string, opts Options) (db *DB, err error) {
	lock, err := lockPath(path, opts.ReadOnly, opts.Timeout)
	if err != nil {
		return nil, err
	}
	sweepStale(os.TempDir())
	dir, err := os.MkdirTemp("", tempPattern)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	enc := &encrypted{path: path, dir: dir, lock: lock, key: append([]byte(nil), opts.FileKey...)}
	defer func() {
		if err != nil {
			enc.removeIfEmpty()
			enc.release()
		}
	}()
	if enc.owner, err = holdDir(dir); err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	plain := filepath.Join(dir, filepath.Base(path))
	_, isEnc, err := EncryptedKeyID(path)
	switch {
	case err != nil:
		return nil, err
	case isEnc:
		enc.wasEncrypted = true
		if err := DecryptFile(path, plain, opts.FileKey); err != nil {
			return nil, err
		}
	default:
		if err := copyPlain(path, plain); err != nil {
			return nil, err
		}
	}
	inner := opts
	inner.FileKey = nil
	if db, err = openPlain(plain, inner); err != nil {
		return nil, renamed(err, plain, path)
	}
	db.path, db.enc = path, enc
	enc.txID = db.lastTx()
	return db, nil
}

// lastTx returns the ID of the last committed transaction.
func (db *DB) lastTx() int {
	var id int
	db.bolt.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
	return id
}

// removeIfEmpty removes the empty file that locking a missing store
// created, when the open fails.
func (e *encrypted) removeIfEmpty() {
	if fi, err := e.lock.Stat(); err == nil && fi.Size() == 0 {
		os.Remove(e.path)
	}
}

// renamedError is an error about a plain copy that names the file it is
// a copy of instead.
type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }

// renamed returns err with the path of the plain copy replaced by path,
// still matching what err matches (errors.Is, errors.As).
func renamed(err error, plain, path string) error {
	return &renamedError{msg: strings.ReplaceAll(err.Error(), plain, path), err: err}
}

// copyPlain copies the plain store at src, if any, to dst.
func copyPlain(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("store: %s: %w", src, unwrapPath(err))
	}
	if len(b) == 0 {
		return nil
	}
	return os.WriteFile(dst, b, 0o600)
}

// release removes the plain copy and unlocks the file.
func (e *encrypted) release() error {
	err := os.RemoveAll(e.dir)
	if e.owner != nil {
		e.owner.Close()
	}
	if cerr := e.lock.Close(); err == nil {
		err = cerr
	}
	return err
}

// openPlain opens a plain (not encrypted) store file.
func openPlain(path string, opts Options) (db *DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if db != nil && db.bolt != nil {
				db.bolt.Close()
			}
			db, err = nil, corrupt(path, "%v", r)
		}
	}()
	db = &DB{path: path, readOnly: opts.ReadOnly, toolVersion: opts.ToolVersion}
	if db.toolVersion == "" {
		db.toolVersion = buildVersion()
	}
	if db.seal, err = newSealer(path, opts.SealKey); err != nil {
		return nil, err
	}

	fi, statErr := os.Stat(path)
	if statErr == nil && fi.IsDir() {
		return nil, fmt.Errorf("store: %s: is a directory", path)
	}
	exists := statErr == nil && fi.Size() > 0
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return nil, fmt.Errorf("store: %s: %w", path, unwrapPath(statErr))
	}
	if opts.ReadOnly && !exists {
		if statErr != nil {
			return nil, fmt.Errorf("store: %s: %w", path, unwrapPath(statErr))
		}
		return nil, corrupt(path, "empty file")
	}
	if exists {
		// Check the pages under a shared lock, so that no writer changes
		// them meanwhile, before bbolt trusts them.
		ro, err := db.openBolt(opts, true)
		if err != nil {
			return nil, err
		}
		if err := checkFile(path); err != nil {
			ro.Close()
			return nil, corrupt(path, "%v", err)
		}
		if opts.ReadOnly {
			db.bolt = ro
			if err := db.load(); err != nil {
				ro.Close()
				return nil, err
			}
			return db, nil
		}
		ro.Close()
	}
	if db.bolt, err = db.openBolt(opts, false); err != nil {
		return nil, err
	}
	if err := giveToDirOwner(path); err != nil {
		db.bolt.Close()
		return nil, err
	}
	if err := db.load(); err != nil {
		db.bolt.Close()
		return nil, err
	}
	return db, nil
}

// openBolt opens the bbolt file and turns its errors into store errors.
func (db *DB) openBolt(opts Options, readOnly bool) (*bolt.DB, error) {
	b, err := bolt.Open(db.path, 0o600, &bolt.Options{
		Timeout:  opts.Timeout,
		ReadOnly: readOnly,
		PageSize: opts.pageSize,
	})
	if err == nil {
		return b, nil
	}
	var pe *fs.PathError
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("store: %s: %w", db.path, ErrLocked)
	case errors.As(err, &pe):
		return nil, fmt.Errorf("store: %s: %w", db.path, pe.Err)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch),
		errors.Is(err, berrors.ErrChecksum), strings.Contains(err.Error(), "file size too small"):
		return nil, corrupt(db.path, "%v", err)
	}
	return nil, fmt.Errorf("store: %s: %w", db.path, err)
}

// load checks the schema and reads the redaction key, and first sets up a
// new store: the buckets, the schema version, a random redaction key.
func (db *DB) load() error {
	var needInit bool
	err := db.bolt.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			var foreign bool
			tx.ForEach(func([]byte, *bolt.Bucket) error { foreign = true; return nil })
			if foreign || db.readOnly {
				return corrupt(db.path, "no meta bucket")
			}
			needInit = true
			return nil
		}
		if err := db.checkSchema(meta.Get(keySchema)); err != nil {
			return err
		}
		key := meta.Get(keyRedactionKey)
		if len(key) < 16 {
			return corrupt(db.path, "missing redaction key")
		}
		db.redactor = secret.NewRedactor(key)
		for _, name := range allBuckets {
			if tx.Bucket(name) == nil && !db.readOnly {
				needInit = true
			}
		}
		return nil
	})
	if err != nil || !needInit {
		return err
	}
	return db.bolt.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("store: %s: %w", db.path, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		if meta.Get(keySchema) != nil {
			return nil
		}
		key := make([]byte, 32)
		rand.Read(key)
		for k, v := range map[string][]byte{
			string(keySchema):       []byte(strconv.Itoa(schemaMajor)),
			string(keyRedactionKey): key,
			string(keyCreatedBy):    []byte(db.toolVersion),
			string(keyCreated):      []byte(time.Now().UTC().Format(time.RFC3339)),
		} {
			if err := meta.Put([]byte(k), v); err != nil {
				return fmt.Errorf("store: %s: %w", db.path, err)
			}
		}
		db.redactor = secret.NewRedactor(key)
		return nil
	})
}

// checkSchema refuses a schema this code does not understand.
func (db *DB) checkSchema(v []byte) error {
	s := string(v)
	majorStr, _, _ := strings.Cut(s, ".")
	major, err := strconv.Atoi(majorStr)
	if err != nil || major < 1 {
		return corrupt(db.path, "schema version %q", s)
	}
	if major > schemaMajor {
		return &schemaError{path: db.path, found: s}
	}
	return nil
}

// Close closes the store. A store used through a plain copy (Options.FileKey)
// is written back encrypted, when opened for writing and changed (or plain
// before), and its copy removed in any case; a read-only store is never
// written. For a writable store it first cuts the file to
// the pages in use: bbolt grows a file in large steps, and the pages past
// its high-water mark hold nothing (best effort; where the system refuses
// to shorten a mapped file, the file keeps its size).
func (db *DB) Close() error {
	if db == nil || db.bolt == nil {
		return nil
	}
	e := db.enc
	changed := e != nil && (!e.wasEncrypted || db.lastTx() != e.txID)
	if !db.readOnly {
		db.shrink()
	}
	plain := db.bolt.Path()
	err := db.bolt.Close()
	db.bolt = nil
	if err != nil {
		err = fmt.Errorf("store: %s: %w", db.path, err)
	}
	if e != nil {
		db.enc = nil
		if err == nil && !db.readOnly && changed {
			// The previous file stays until the new one is complete.
			err = EncryptFile(plain, e.path, e.key)
		}
		err = errors.Join(err, e.release())
	}
	return err
}

// shrink truncates the file to bbolt's high-water mark. It holds the write
// transaction meanwhile, so that no commit in this process races it, and
// bbolt's file lock keeps other processes out.
func (db *DB) shrink() {
	tx, err := db.bolt.Begin(true)
	if err != nil {
		return
	}
	defer tx.Rollback()
	size := tx.Size()
	f, err := os.OpenFile(db.bolt.Path(), os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > size && runtime.GOOS != "windows" {
		if f.Truncate(size) == nil {
			f.Sync()
		}
	}
}

// Path returns the path of the store file.
func (db *DB) Path() string { return db.path }

// Redactor returns the store's redactor, keyed with the store's own random
// key, so that digests in plans and reports match those in the store.
func (db *DB) Redactor() *secret.Redactor { return db.redactor }

// buildVersion returns the version of the main module, or "unknown".
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "unknown"
}

// unwrapPath drops the operation and path of an *fs.PathError, which the
// store error names already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
