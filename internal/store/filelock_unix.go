//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// ownerFile is the file, in the private directory of a plain copy, that
// the process using the copy holds locked. The lock goes when the process
// does, however it ends (SIGKILL included), so a directory whose owner
// file can be locked belongs to no live process.
const ownerFile = ".owner"

// holdDir locks the owner file of dir for as long as the returned file is
// open. The file is locked under another name and then renamed, so that
// no sweeper ever finds it unlocked.
func holdDir(dir string) (*os.File, error) {
	tmp := filepath.Join(dir, ownerFile+".new")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, ownerFile)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// staleAfter is how old a plain copy's directory without an owner file
// must be before it counts as left behind: its process may be between
// creating the directory and locking the file.
const staleAfter = 10 * time.Minute

// sweepStale removes the plain copies that processes killed while using
// an encrypted store left in tmp (snapply-store-* directories of this
// user whose owner is gone), and returns how many it removed. It is best
// effort: what it cannot read or lock, it leaves.
func sweepStale(tmp string) int {
	dirs, _ := filepath.Glob(filepath.Join(tmp, tempPattern+"*"))
	removed := 0
	for _, dir := range dirs {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			if time.Since(fi.ModTime()) > staleAfter && os.RemoveAll(dir) == nil {
				removed++
			}
			continue
		}
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil && os.RemoveAll(dir) == nil {
			removed++
		}
		f.Close()
	}
	return removed
}
