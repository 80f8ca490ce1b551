package store

import (
	"errors"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// Tx is a transaction on the store, read-only inside View and read-write
// inside Update. It is valid only inside the function it is passed to, and
// so is every []byte read through it (see the package documentation).
type Tx struct {
	db  *DB
	btx *bolt.Tx
	// built caches the entries rebuilt by entries, when not nil.
	built map[string]builtEntries
}

// View runs fn in a read-only transaction. Any number of View calls may
// run at once, alongside one Update.
//
// A panic inside the transaction (bbolt panics on some damaged pages that
// Open's check cannot see) is returned as an error that wraps ErrCorrupt.
func (db *DB) View(fn func(*Tx) error) (err error) {
	if db.bolt == nil {
		return errClosed(db)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer db.recoverPanic(&err)
	return db.bolt.View(func(btx *bolt.Tx) error {
		return fn(&Tx{db: db, btx: btx})
	})
}

// Update runs fn in a read-write transaction, and commits it when fn
// returns nil: everything fn wrote is in the file, or (when fn returns an
// error or the process dies first) none of it. Only one Update runs at a
// time. Panics are handled as in View.
func (db *DB) Update(fn func(*Tx) error) (err error) {
	if db.bolt == nil {
		return errClosed(db)
	}
	if db.readOnly {
		return errReadOnly(db)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer db.recoverPanic(&err)
	return db.bolt.Update(func(btx *bolt.Tx) error {
		return fn(&Tx{db: db, btx: btx})
	})
}

func (db *DB) recoverPanic(err *error) {
	if r := recover(); r != nil {
		*err = corrupt(db.path, "panic: %v", r)
	}
}

func errClosed(db *DB) error {
	return errors.New("store: " + db.path + ": closed")
}

func errReadOnly(db *DB) error {
	return errors.New("store: " + db.path + ": opened read-only")
}

// bucket returns the bucket name, or nil when a read-only store lacks it.
func (tx *Tx) bucket(name []byte) *bolt.Bucket {
	return tx.btx.Bucket(name)
}
