//go:build unix

package store

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// giveToDirOwner makes the store file belong to the owner of its
// directory when snapply runs as root and the directory is another user's:
// a container writing into a mounted workspace (docker run, a container
// job) must leave a file that the workspace's owner, such as the runner
// user that uploads the artifact and cleans the checkout, can read and
// remove. The mode stays 0600: the file holds digests of Secret values.
func giveToDirOwner(path string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	dir, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return nil // the open reports a missing directory itself
	}
	st, ok := dir.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == 0 {
		return nil
	}
	if err := os.Lchown(path, int(st.Uid), int(st.Gid)); err != nil {
		return fmt.Errorf("store: %s: give it to the owner of its directory (uid %d): %w", path, st.Uid, unwrapPath(err))
	}
	return nil
}
