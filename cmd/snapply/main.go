// Command snapply plans and applies Kubernetes manifests from git with
// server-side apply, recording every run in a content-addressed store file.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/snapply/snapply/internal/cli"
	"github.com/snapply/snapply/internal/memprofile"
)

// defaultMemoryLimit is the soft limit of the Go heap unless GOMEMLIMIT
// says otherwise: the garbage collector works harder near it rather than
// let a plan of thousands of objects take the runner's memory.
const defaultMemoryLimit = 200 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := memprofile.Start(os.Getenv("SNAPPLY_MEMPROFILE"))
	stopCPU := memprofile.CPU(os.Getenv("SNAPPLY_CPUPROFILE"))
	code := cli.Main(ctx, os.Args[1:], cli.StdIO())
	stopCPU()
	stopProfile()
	stop()
	os.Exit(code)
}
