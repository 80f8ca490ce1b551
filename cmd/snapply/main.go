// Command snapply plans and applies Kubernetes manifests from git with
// server-side apply, recording every run in a content-addressed store file.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/snapply/snapply/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.StdIO())
	stop()
	os.Exit(code)
}
