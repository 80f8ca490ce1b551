//go:build unix

package testenv

import (
	"os"
	"syscall"
)

// newProcessGroup makes a child the leader of a new process group, so that
// a terminal's Ctrl-C does not reach it and it can be signalled with
// everything it starts.
func newProcessGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group p leads.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	return syscall.Kill(-p.Pid, sig)
}
