package store

import (
	"errors"
	"fmt"
	"strings"
)

// Errors that callers can test for with errors.Is.
var (
	// ErrNotFound: no snapshot or object has the ID asked for.
	ErrNotFound = errors.New("not found")
	// ErrAmbiguous: a snapshot ID prefix matches more than one snapshot.
	ErrAmbiguous = errors.New("ambiguous")
	// ErrLocked: another process holds the store open for writing.
	ErrLocked = errors.New("locked by another process")
	// ErrNewerSchema: the store was written by a newer snapply.
	ErrNewerSchema = errors.New("schema version is newer than this snapply understands")
	// ErrCorrupt: the file is not a snapply store, or it is damaged.
	ErrCorrupt = errors.New("not a valid snapply store")
)

// schemaError is ErrNewerSchema with the version found.
type schemaError struct {
	path  string
	found string
}

func (e *schemaError) Error() string {
	return fmt.Sprintf("store: %s: schema version %s is newer than this snapply understands (%d); upgrade snapply", e.path, e.found, schemaMajor)
}

func (e *schemaError) Is(target error) bool { return target == ErrNewerSchema }

// corrupt returns an error saying that the file at path is damaged, on one
// line.
func corrupt(path string, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	msg = strings.Join(strings.Fields(msg), " ")
	return fmt.Errorf("store: %s: %w: %s", path, ErrCorrupt, msg)
}
