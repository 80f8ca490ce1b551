//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockPath locks the file at path (exclusively, or shared when readOnly)
// for as long as the returned file is open, waiting up to timeout (0:
// for ever). An encrypted store is used through a private plain copy, so
// bbolt's own lock does not serialise two processes that use it: this one
// does. A file replaced while waiting (the other process wrote it back) is
// locked anew. A missing file is created empty (it is written encrypted on
// close).
func lockPath(path string, readOnly bool, timeout time.Duration) (*os.File, error) {
	how, flag := syscall.LOCK_EX, os.O_RDWR|os.O_CREATE
	if readOnly {
		how, flag = syscall.LOCK_SH, os.O_RDONLY
	}
	deadline := time.Now().Add(timeout)
	for {
		f, err := os.OpenFile(path, flag, 0o600)
		if err != nil {
			return nil, fmt.Errorf("store: %s: %w", path, unwrapPath(err))
		}
		for {
			err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
			if !errors.Is(err, syscall.EWOULDBLOCK) {
				break
			}
			if timeout > 0 && time.Now().After(deadline) {
				f.Close()
				return nil, fmt.Errorf("store: %s: %w", path, ErrLocked)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("store: %s: lock: %w", path, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return f, nil
		}
		f.Close() // replaced meanwhile: lock the new file
	}
}
