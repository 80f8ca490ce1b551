//go:build !unix

package testenv

import (
	"os"
	"syscall"
)

// newProcessGroup returns nil: process groups are a Unix notion.
func newProcessGroup() *syscall.SysProcAttr { return nil }

// signalGroup kills p: other signals cannot be sent here.
func signalGroup(p *os.Process, _ syscall.Signal) error {
	return p.Kill()
}
