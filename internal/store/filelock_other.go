//go:build !unix

package store

import (
	"fmt"
	"os"
	"time"
)

// lockPath opens path; files are not locked where there is no flock.
func lockPath(path string, readOnly bool, _ time.Duration) (*os.File, error) {
	flag := os.O_RDWR | os.O_CREATE
	if readOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, unwrapPath(err))
	}
	return f, nil
}

// holdDir is a no-op where there is no flock.
func holdDir(string) (*os.File, error) { return nil, nil }

// sweepStale removes nothing where there is no flock to tell a live
// owner from a dead one.
func sweepStale(string) int { return 0 }
