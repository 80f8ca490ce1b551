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
