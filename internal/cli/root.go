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
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/go-logr/logr"

	"github.com/snapply/snapply/internal/action"
	"github.com/snapply/snapply/internal/kube"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	return newRoot(&globals{io: streams, kube: newKubeFlags()})
}

// newRoot builds the command tree around g.
func newRoot(g *globals) *cobra.Command {
	streams := g.io
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
		newStoreCommand(g),
		newLockCommand(g),
		newGraphCommand(g),
		newVersionCommand(g),
		newRenderCommand(g),
	)
	g.addClusterFlags(root)
	completeFlagValues(root)
	helpTemplateFuncs.Do(func() {
		cobra.AddTemplateFuncs(template.FuncMap{
			"commandFlagUsages": func(c *cobra.Command) string { return flagUsages(c, false) },
			"clusterFlagUsages": func(c *cobra.Command) string { return flagUsages(c, true) },
		})
	})
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(), "{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}",
		"{{commandFlagUsages . | trimTrailingWhitespaces}}{{end}}{{if clusterFlagUsages .}}\n\nCluster flags (kubeconfig and auth, as kubectl's):\n{{clusterFlagUsages . | trimTrailingWhitespaces}}{{end}}", 1))
	return root
}

// progress prints one progress line to stderr unless --quiet.
func (g *globals) progress(format string, args ...any) {
	if g.quiet {
		return
	}
	fmt.Fprintf(g.io.Err, format+"\n", args...)
}

// offline is the annotation of a command that never talks to a cluster:
// it gets no kubeconfig and auth flags.
const offline = "snapply.dev/offline"

// addClusterFlags gives every command of root that may talk to a cluster
// (all but those annotated offline) kubectl's kubeconfig and auth flags
// (--kubeconfig, --context, -n, --as, --token, ...), as its own flags, so
// that help lists them only where they do something. A command's own flag
// of the same name wins (version's --server).
func (g *globals) addClusterFlags(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Annotations[offline] != "" {
			continue
		}
		kubeFlags := pflag.NewFlagSet("kube", pflag.ContinueOnError)
		g.kube.AddFlags(kubeFlags)
		kubeFlags.VisitAll(func(f *pflag.Flag) {
			if c.Flags().Lookup(f.Name) == nil {
				f.Annotations = map[string][]string{clusterFlag: {"true"}}
				c.Flags().AddFlag(f)
			}
		})
		g.registerClusterCompletions(c)
	}
}

// newKubeFlags returns kubectl's kubeconfig and auth flags, with the
// per-request timeout snapply uses as the default of --request-timeout, so
// that help shows the value in force.
func newKubeFlags() *genericclioptions.ConfigFlags {
	f := genericclioptions.NewConfigFlags(true)
	timeout := formatDuration(kube.DefaultOptions().Timeout)
	f.Timeout = &timeout
	return f
}

// formatDuration prints d as a flag default: "60s" rather than "1m0s".
func formatDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// clusterFlag annotates the kubeconfig and auth flags, which help lists
// apart from a command's own.
const clusterFlag = "snapply.dev/cluster-flag"

// helpTemplateFuncs registers the usage template's functions once: cobra
// keeps them process-wide.
var helpTemplateFuncs sync.Once

// flagUsages prints the usage of c's own flags, or of its cluster flags.
func flagUsages(c *cobra.Command, cluster bool) string {
	fs := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if (f.Annotations[clusterFlag] != nil) == cluster {
			fs.AddFlag(f)
		}
	})
	return fs.FlagUsages()
}
