package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"
)

func TestParentPID(t *testing.T) {
	tests := []struct {
		name string
		stat string
		want int
	}{
		{"plain", "123 (etcd) S 45 123 123 0 -1", 45},
		{"name with spaces and parens", "7 (a b) (c)) R 1 7 7", 1},
		{"truncated", "7 (x) S", -1},
		{"garbage", "nonsense", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parentPID([]byte(tt.stat)); got != tt.want {
				t.Errorf("parentPID(%q) = %d, want %d", tt.stat, got, tt.want)
			}
		})
	}
}

// sleeper is a process in its own group, as Env starts its own.
type sleeper struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startSleep(t *testing.T) *sleeper {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = newProcessGroup()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &sleeper{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-s.done })
	return s
}

// exitsWithin reports whether the process exits within d.
func (s *sleeper) exitsWithin(d time.Duration) bool {
	select {
	case <-s.done:
		return true
	case <-time.After(d):
		return false
	}
}

func TestWatchdogKillsWatchedProcessesWhenNotStopped(t *testing.T) {
	dir := t.TempDir()
	wd, err := startWatchdog(dir)
	if err != nil {
		t.Fatal(err)
	}
	sleep := startSleep(t)
	if err := wd.watch(sleep.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	// What a dying test binary does: its end of the pipe closes.
	if err := wd.release(true); err != nil {
		t.Fatal(err)
	}
	if !sleep.exitsWithin(5 * time.Second) {
		t.Error("watched process still running after the watchdog cleaned up")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory %s not removed: %v", dir, err)
	}
}

func TestWatchdogLeavesProcessesAfterCleanStop(t *testing.T) {
	dir := t.TempDir()
	wd, err := startWatchdog(dir)
	if err != nil {
		t.Fatal(err)
	}
	sleep := startSleep(t)
	if err := wd.watch(sleep.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := wd.release(false); err != nil {
		t.Fatal(err)
	}
	if sleep.exitsWithin(500 * time.Millisecond) {
		t.Error("watchdog killed a process after a clean stop")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("directory removed after a clean stop: %v", err)
	}
}

// processesMentioning returns the processes whose command line holds s:
// their IDs and command lines.
func processesMentioning(s string) map[int]string {
	entries, _ := os.ReadDir("/proc")
	found := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) {
			found[pid] = string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		}
	}
	return found
}

const crashEnv = "SNAPPLY_TESTENV_CRASH"

// TestCrashHelper is run by TestPanickingTestLeavesNothingRunning in a
// child test binary: it panics with the package's Env running.
func TestCrashHelper(t *testing.T) {
	if os.Getenv(crashEnv) == "" {
		t.Skip("run by TestPanickingTestLeavesNothingRunning")
	}
	fmt.Printf("testenv-dir=%s\n", env.Dir)
	panic("deliberate panic with the Env running")
}

func TestPanickingTestLeavesNothingRunning(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds etcd and kube-apiserver through /proc")
	}
	if testing.Short() {
		t.Skip("starts a second API server")
	}
	var out bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"=1")
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err == nil {
		t.Fatalf("the crashing test binary succeeded:\n%s", out.String())
	}
	m := regexp.MustCompile(`testenv-dir=(\S+)`).FindSubmatch(out.Bytes())
	if m == nil {
		t.Fatalf("the crashing test binary did not start its Env:\n%s", out.String())
	}
	dir := string(m[1])
	deadline := time.Now().Add(20 * time.Second)
	for {
		left := processesMentioning(dir)
		_, statErr := os.Stat(dir)
		if len(left) == 0 && errors.Is(statErr, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			for pid := range left { // do not leave them to the next test run
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
			_ = os.RemoveAll(dir)
			t.Fatalf("20s after the test binary died: processes left %v, directory %s: %v", left, dir, statErr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
