// Package cli holds snapply's cobra commands. It is the only layer (with
// package action) that knows about flags, prints, or decides exit codes; the
// packages it calls return data and errors.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/go-logr/logr"

	"github.com/snapply/snapply/internal/action"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/klog/v2"
)

// IO is where a command reads and writes.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// StdIO returns the process's standard streams.
func StdIO() IO { return IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr} }

// ExitError carries the exit code a command wants. Err may be nil for a
// non-zero code that is not an error (plan --detailed-exitcode with
// changes). It is the action's type, so that both layers speak one.
type ExitError = action.ExitError

// ExitCode maps an error returned by a command to the process exit code:
// 0 for nil, the code of an ExitError, 1 otherwise.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}

// Main runs snapply with args (without the program name) and returns the
// exit code. It prints the error, if any, as one line on streams.Err.
func Main(ctx context.Context, args []string, streams IO) int {
	// client-go logs some failures itself (klog, to stderr); snapply reports
	// every failure once, as an error or an outcome, so those lines would
	// only break the one-line rule.
	quietKlog.Do(func() { klog.SetLogger(logr.Discard()) })
	cmd := NewRootCommand(streams)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	var exit *ExitError
	if err != nil && !(errors.As(err, &exit) && exit.Err == nil) {
		fmt.Fprintf(streams.Err, "error: %s\n", action.OneLine(err.Error()))
	}
	return ExitCode(err)
}

// quietKlog silences client-go's own logging once per process.
var quietKlog sync.Once

// globals are the flags every command shares.
type globals struct {
	io    IO
	kube  *genericclioptions.ConfigFlags
	color string
	quiet bool
}

// NewRootCommand builds the snapply command tree.
func NewRootCommand(streams IO) *cobra.Command {
	g := &globals{io: streams, kube: genericclioptions.NewConfigFlags(true)}
	root := &cobra.Command{
		Use:   "snapply",
		Short: "Plan in the pull request, apply on merge: push-based GitOps for Kubernetes",
		Long: `snapply renders manifests (kustomize or plain YAML), snapshots the live
state of the cluster into a content-addressed store file, and plans the change
with server-side-apply dry runs: creates, updates with diffs, conflicts with
the field manager that owns each field, and objects the server refuses.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	g.kube.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&g.color, "color", "auto", "colour the text output: auto (when stdout is a terminal and NO_COLOR is unset), always, never")
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "do not print progress to stderr")

	root.AddCommand(
		newPlanCommand(g),
		newApplyCommand(g),
		newRollbackCommand(g),
		newActionCommand(g),
		newHistoryCommand(g),
		newDiffCommand(g),
		newDriftCommand(g),
		newShowCommand(g),
		newVersionCommand(g),
	)
	return root
}

// progress prints one progress line to stderr unless --quiet.
func (g *globals) progress(format string, args ...any) {
	if g.quiet {
		return
	}
	fmt.Fprintf(g.io.Err, format+"\n", args...)
}
