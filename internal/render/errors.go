package render

import (
	"errors"
	"fmt"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/text"
)

// ErrNoObjects is returned (wrapped in an *Error) when a path renders no
// object and Options.AllowEmpty is not set: applying an empty desired set
// would prune everything.
var ErrNoObjects = errors.New("renders no objects (an empty desired set would prune everything)")

// ErrOutsideRoot is wrapped by the error of a read that would leave
// Options.Root.
var ErrOutsideRoot = errors.New("is outside the root")

// ErrRemote is wrapped by the error of a kustomization that refers to a
// remote base or file (a git repository or an http(s) URL).
var ErrRemote = errors.New("is remote: only files under the root are rendered")

// Error is a rendering error about one file. Source.File is relative to the
// root (or the path as given to Render when that path cannot be read);
// Source.Line is 0 when the line is not known.
type Error struct {
	Source object.Source
	Err    error
}

// Error prints "render: file:line: message" on one line.
func (e *Error) Error() string {
	return "render: " + e.Source.String() + ": " + text.OneLine(e.Err.Error())
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// DuplicateError reports two objects with the same identity.
type DuplicateError struct {
	Key           object.Key
	First, Second object.Source
}

// Error prints "render: deployment.apps/web -n prod is defined twice: a.yaml:1 and b.yaml:7".
func (e *DuplicateError) Error() string {
	return fmt.Sprintf("render: %s is defined twice: %s and %s", e.Key, e.First, e.Second)
}

// fileError returns an *Error about file:line.
func fileError(file string, line int, err error) error {
	return &Error{Source: object.Source{File: file, Line: line}, Err: err}
}
