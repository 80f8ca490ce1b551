//go:build unix

package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// As root (a container writing into a mounted workspace), a store created
// in another user's directory belongs to that user, who can read it.
func TestStoreBelongsToTheWorkspaceOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test gives the workspace to another uid")
	}
	const uid, gid = 1001, 1001
	ws := filepath.Join(t.TempDir(), "workspace")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(ws, uid, gid); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws, DefaultPath)
	db, err := Open(path, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != uid || st.Gid != gid {
		t.Errorf("store owned by %d:%d, want the workspace's %d:%d", st.Uid, st.Gid, uid, gid)
	}
	if fi.Mode().Perm()&0o400 == 0 {
		t.Errorf("mode %v: the owner cannot read it", fi.Mode())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("mode %v: others can read digests of Secret values", fi.Mode())
	}
	// Reopened by root (the next step), it stays the owner's.
	db, err = Open(path, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if fi, _ := os.Stat(path); fi.Sys().(*syscall.Stat_t).Uid != uid {
		t.Error("reopening as root took the file back")
	}
	// Not root's to give away in root's own directory.
	own := filepath.Join(t.TempDir(), DefaultPath)
	if db, err := Open(own, DefaultOptions()); err != nil {
		t.Fatal(err)
	} else {
		db.Close()
	}
	if fi, _ := os.Stat(own); fi.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Error("a store in root's own directory changed owner")
	}
}
