// Command snapply plans and applies Kubernetes manifests from git with
// server-side apply, recording every run in a content-addressed store file.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/snapply/snapply/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.NewRootCommand(cli.StdIO()).ExecuteContext(ctx)
	stop()
	var exit *cli.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.Err == nil) {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
	}
	os.Exit(cli.ExitCode(err))
}
