package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/report"
)

// applyOptions are the flags of `snapply apply`.
type applyOptions struct {
	engine.Options
	deploy engine.DeployOptions
	output string
	review reviewOptions
}

func newApplyCommand(g *globals) *cobra.Command {
	o := applyOptions{Options: engine.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "apply PATH",
		Short: "Make the cluster match PATH: server-side apply in waves, prune, wait",
		Long: `apply takes the same snapshot and plan as ` + "`snapply plan`" + `, then applies with
server-side apply in dependency order (CRDs and Namespaces, prerequisites,
workloads, webhooks), prunes the objects of its inventory that left PATH,
waits until what it applied is ready, and records every object's outcome in
the store. It never takes a field another manager owns unless forced.

A Lease per inventory (--name) serialises applies: a second apply waits for
the first, up to --timeout.

Exit codes: 0 when every object reached its planned state; 1 otherwise (a
conflict, an invalid object, a failed write, a readiness timeout, an
interrupt). What was applied stays applied and is recorded. With --fail-on,
a plan with a risk of a kind it names exits 1 before anything is applied.`,
		Example: `  snapply apply ./overlays/prod --name prod
  snapply apply ./overlays/prod --name prod --timeout 10m -o json
  snapply apply ./overlays/prod --name prod --force-conflicts`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			return g.runApply(cmd.Context(), engine.Target{Path: args[0]}, o)
		},
	}
	f := cmd.Flags()
	addEngineFlags(f, &o.Options)
	f.StringVarP(&o.output, "output", "o", "text", "output format: text, markdown or json")
	addDeployFlags(f, &o.deploy, "no longer in PATH")
	addReviewFlags(cmd, &o.review)
	return cmd
}

// runApply plans and applies t, and writes the result.
func (g *globals) runApply(ctx context.Context, t engine.Target, o applyOptions) (err error) {
	diff, failOn, err := o.review.parse()
	if err != nil {
		return err
	}
	p, err := g.newEngine().PrepareApply(ctx, t, o.Options, o.deploy.Timeout)
	if p != nil {
		defer func() { err = errors.Join(err, p.Close()) }()
	}
	if err != nil {
		return err
	}
	if o.output == "text" && !g.quiet {
		if err := g.writePlan(g.io.Err, p.Plan, "text", diff); err != nil {
			return err
		}
	}
	if err := failOnExit(p.Plan, failOn, "nothing was applied"); err != nil {
		return err
	}
	res, recErr := p.Deploy(ctx, o.deploy)
	if res == nil {
		return recErr
	}
	if err := g.writeResult(g.io.Out, res, o.output); err != nil {
		return errors.Join(err, recErr)
	}
	return applyExit(res, recErr)
}

// applyExit maps the outcome of an apply to the exit code.
func applyExit(res *apply.Result, recErr error) error {
	if recErr != nil {
		return fmt.Errorf("apply: recording the outcome: %w", recErr)
	}
	if !res.OK() {
		return &ExitError{Code: 1, Err: resultError(res)}
	}
	return nil
}

// writeResult writes the report of an apply in the chosen format.
func (g *globals) writeResult(w io.Writer, res *apply.Result, output string) error {
	return writeReport(w, output, func() error { return report.ResultJSON(w, res) },
		func() error { return report.ResultMarkdown(w, res, report.DefaultResultMarkdownOptions()) },
		func(opts report.TextOptions) error { return report.ResultText(w, res, opts) }, g.useColor(w))
}

func resultError(res *apply.Result) error {
	s := res.Summary
	msg := fmt.Sprintf("apply failed: %d failed, %d not attempted, %d not ready", s.Failed, s.NotAttempted, s.NotReady)
	if res.Interrupted {
		msg = "apply interrupted: " + msg[len("apply failed: "):]
	}
	return errors.New(msg)
}
