//go:build unix

package store

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// holderEnv makes the test binary, started by startHolder, open the store
// it names and hold it until killed.
const holderEnv = "SNAPPLY_TEST_HOLD_STORE"

// TestHolder is the child process of TestSweepStalePlainCopies: it opens
// an encrypted store, says so on stdout, and waits to be killed.
func TestHolder(t *testing.T) {
	path := os.Getenv(holderEnv)
	if path == "" {
		t.Skip("the child process of TestSweepStalePlainCopies")
	}
	db, err := Open(path, encOpts(fileKey(7), true))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	os.Stdout.WriteString("open\n")
	time.Sleep(time.Minute)
}

// startHolder starts a process that holds the encrypted store at path
// open, and returns once it has opened it.
func startHolder(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHolder$")
	cmd.Env = append(os.Environ(), holderEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "open\n" {
		t.Fatalf("holder: %q, %v", line, err)
	}
	return cmd
}

// A process killed with SIGKILL while it uses an encrypted store leaves
// its plain copy behind; the next Open of any encrypted store removes it,
// and never the copy of a process that is still running.
func TestSweepStalePlainCopies(t *testing.T) {
	tmp := privateTemp(t)
	key := fileKey(7)
	path := encryptedStore(t, key, 3)

	killed := startHolder(t, path)
	live := startHolder(t, path)
	copies, _ := filepath.Glob(filepath.Join(tmp, "snapply-store-*"))
	if len(copies) != 2 {
		t.Fatalf("plain copies %v, want one per holder", copies)
	}
	killed.Process.Kill() // SIGKILL: no deferred Close runs
	killed.Wait()

	// A directory a process has made but not yet claimed is left alone.
	unclaimed, err := os.MkdirTemp(tmp, tempPattern)
	if err != nil {
		t.Fatal(err)
	}

	db, err := Open(path, encOpts(key, true))
	if err != nil {
		t.Fatal(err)
	}
	during, _ := filepath.Glob(filepath.Join(tmp, "snapply-store-*"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "snapply-store-*"))
	if len(left) != 2 || !slices.Contains(left, unclaimed) {
		t.Fatalf("after the next Open and Close: %v, want the live holder's copy and %s", left, unclaimed)
	}
	if len(during) != 3 {
		t.Errorf("while open: %v, want the live holder's, the unclaimed and this one's", during)
	}
	var kept string
	for _, d := range left {
		if d != unclaimed {
			kept = d
		}
	}
	if !slices.Contains(copies, kept) {
		t.Fatalf("kept %s, which is not a holder's", kept)
	}
	if _, err := os.Stat(filepath.Join(kept, DefaultPath)); err != nil {
		t.Errorf("the live holder's plain copy: %v", err)
	}

	// Once the live holder is gone too, and the unclaimed directory has
	// been left for longer than a process takes to claim one, both go.
	live.Process.Kill()
	live.Wait()
	old := time.Now().Add(-2 * staleAfter)
	os.Chtimes(unclaimed, old, old)
	if n := sweepStale(tmp); n != 2 {
		t.Errorf("sweepStale removed %d directories, want 2", n)
	}
	checkNoTemp(t, tmp, "after the sweep")
}
