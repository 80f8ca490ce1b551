package testenv

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
)

// watchdogScript runs in its own process group with a pipe from this process
// on its standard input. It reads the process IDs to watch, one per line.
// "stop" means the Env was stopped cleanly: it exits. End of file without
// "stop" means this process died (or gave up on a clean stop): it terminates
// every watched process group, waits up to 5s, kills what is left and
// removes the directory given as $1, if any.
//
// dash's kill takes "-PGID" but not "--".
const watchdogScript = `pids=
while read -r line; do
  case $line in
    stop) exit 0 ;;
    *) pids="$pids $line" ;;
  esac
done
for p in $pids; do kill -TERM -$p 2>/dev/null || kill -TERM $p 2>/dev/null; done
i=0
while [ $i -lt 10 ]; do
  alive=
  for p in $pids; do kill -0 $p 2>/dev/null && alive=1; done
  [ -z "$alive" ] && break
  sleep 0.5
  i=$((i+1))
done
for p in $pids; do kill -KILL -$p 2>/dev/null; kill -KILL $p 2>/dev/null; done
if [ -n "$1" ]; then rm -rf "$1"; fi
`

// watchdog cleans up after a test binary that dies without stopping its Env.
type watchdog struct {
	cmd *exec.Cmd

	mu      sync.Mutex
	stdin   io.WriteCloser
	watched map[int]bool
	done    bool
}

// startWatchdog starts the watcher; it removes removeDir (if not empty) when
// it has to clean up.
func startWatchdog(removeDir string) (*watchdog, error) {
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "snapply-testenv-watchdog", removeDir)
	// Its own process group: Ctrl-C in a terminal must reach the test
	// binary, not the watcher that cleans up after it.
	cmd.SysProcAttr = newProcessGroup()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("watchdog: start /bin/sh: %w", err)
	}
	return &watchdog{cmd: cmd, stdin: stdin, watched: map[int]bool{}}, nil
}

// watch adds a process (and the process group it leads) to those to kill.
func (w *watchdog) watch(pid int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	// Its own command line mentions the directory too: never watch itself.
	if w.done || w.watched[pid] || pid == w.cmd.Process.Pid {
		return nil
	}
	if _, err := io.WriteString(w.stdin, strconv.Itoa(pid)+"\n"); err != nil {
		return fmt.Errorf("watchdog: watch process %d: %w", pid, err)
	}
	w.watched[pid] = true
	return nil
}

// release ends the watcher. With kill false the watched processes are known
// to be gone and it just exits; with kill true it terminates whatever is
// left of them and removes the directory, and release waits for that.
func (w *watchdog) release(kill bool) error {
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		return nil
	}
	w.done = true
	var errs []error
	if !kill {
		if _, err := io.WriteString(w.stdin, "stop\n"); err != nil {
			errs = append(errs, err)
		}
	}
	if err := w.stdin.Close(); err != nil {
		errs = append(errs, err)
	}
	w.mu.Unlock()
	if err := w.cmd.Wait(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("watchdog: %w", errs[0])
	}
	return nil
}

// childProcesses returns the IDs of this process's children whose command
// line mentions dir. It reads /proc and returns nothing where there is none.
func childProcesses(dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil || parentPID(stat) != self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// parentPID returns the fourth field of /proc/PID/stat, or -1. The second
// field, the command name in parentheses, may hold spaces and parentheses,
// so fields are counted from the last ')'.
func parentPID(stat []byte) int {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return -1
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	if err != nil {
		return -1
	}
	return ppid
}
