package engine

import (
	"errors"
	"fmt"
	"os"

	"github.com/snapply/snapply/internal/store"
)

// StoreKey says where the store key comes from. With a key, snapshots
// seal Secret values (a rollback unseals them) and the store file is
// encrypted as a whole; an encrypted file opens only with its key.
type StoreKey struct {
	// Env is the environment variable that holds the key; empty means
	// store.KeyEnv (SNAPPLY_STORE_KEY).
	Env string
	// Given says that the caller read the key itself (once, such as the
	// action from its store-key input): Key is the key, nil for none, and
	// no variable is read.
	Given bool
	Key   []byte
	// Hint says how to give the key, in the error about a missing or
	// wrong key; empty means "set <Env> to ...".
	Hint string
}

// name returns the variable that holds the key.
func (k StoreKey) name() string {
	if k.Env == "" {
		return store.KeyEnv
	}
	return k.Env
}

// Read returns the key in the variable Env of getenv (nil: os.Getenv),
// or Key when Given; nil for none. Its errors name the variable, never the
// key.
func (k StoreKey) Read(getenv func(string) string) ([]byte, error) {
	if k.Given {
		return k.Key, nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	return store.KeyFromVar(getenv, k.name())
}

// Explain adds to an error about a missing or wrong key for an encrypted
// store file how to give the right one.
func (k StoreKey) Explain(err error) error {
	hint := k.Hint
	if hint == "" {
		hint = "set " + k.name() + " to the key the file was written with"
	}
	if errors.Is(err, store.ErrEncrypted) || errors.Is(err, store.ErrWrongFileKey) {
		return fmt.Errorf("%w; %s", err, hint)
	}
	return err
}

// OpenStore opens the store at path with the store key k names: it seals
// Secret values, and encrypts the file (or opens an encrypted one). A
// read-only store must exist.
func OpenStore(path string, readOnly bool, k StoreKey, getenv func(string) string) (*store.DB, error) {
	key, err := k.Read(getenv)
	if err != nil {
		return nil, err
	}
	opts := store.DefaultOptions()
	opts.SealKey, opts.FileKey = key, key
	return openStore(path, readOnly, opts, k)
}

// InspectStore opens the existing store at path read-only, to inspect it:
// the store key k names opens an encrypted file, but nothing is unsealed.
func InspectStore(path string, k StoreKey, getenv func(string) string) (*store.DB, error) {
	key, err := k.Read(getenv)
	if err != nil {
		return nil, err
	}
	opts := store.DefaultOptions()
	opts.FileKey = key
	return openStore(path, true, opts, k)
}

func openStore(path string, readOnly bool, opts store.Options, k StoreKey) (*store.DB, error) {
	if readOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		opts.ReadOnly = true
	}
	db, err := store.Open(path, opts)
	return db, k.Explain(err)
}
