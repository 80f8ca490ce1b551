package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/report"
)

func newPlanCommand(g *globals) *cobra.Command {
	o := engine.DefaultOptions()
	var output string
	var detailed bool
	var review reviewOptions
	cmd := &cobra.Command{
		Use:   "plan PATH",
		Short: "Show what an apply would change, validated by the API server",
		Long: `plan renders PATH (a kustomization directory, a YAML file, or a directory of
YAML files), snapshots the live state of the cluster into the store file, and
runs a server-side-apply dry run for every object. Nothing in the cluster
changes.

With --policy DIR, the Rego policies of DIR (conftest's conventions: package
main, rules deny, violation and warn, or with those prefixes) judge every
object: input is the object as rendered, data.snapply.action the plan's
action and data.snapply.live the live object. Verdicts show per object; a
deny makes apply refuse to change anything.

Exit codes: 0 success; 1 error, or a plan with conflicts or invalid objects;
with --detailed-exitcode, 1 when a policy denies an object, and 2 when the
plan has changes (and no errors); 1 when the plan has a risk of a kind that
--fail-on names.`,
		Example: `  snapply plan ./overlays/prod
  snapply plan ./overlays/prod -o json --store /tmp/prod.db
  snapply plan ./manifests --context staging --detailed-exitcode
  snapply plan ./overlays/prod --fail-on=data-loss,broken-ref,rbac --diff=both`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkHTMLOutput(output); err != nil {
				return err
			}
			diff, failOn, err := review.parse()
			if err != nil {
				return err
			}
			p, err := g.newEngine().Plan(cmd.Context(), engine.Target{Path: args[0]}, o)
			if p != nil {
				defer p.Close()
			}
			if err != nil {
				return err
			}
			if output == "html" {
				err = writePlanHTML(g.io.Out, p)
			} else {
				err = g.writePlan(g.io.Out, p.Plan, output, diff)
			}
			if err != nil {
				return err
			}
			if err := failOnExit(p.Plan, failOn, "see the risks above"); err != nil {
				return err
			}
			return planExit(p.Plan, detailed)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "text", "output format: text, markdown, json or html (one self-contained page with the graph)")
	f.BoolVar(&detailed, "detailed-exitcode", false, "exit 0 when nothing changes, 2 when something changes, 1 on error")
	addEngineFlags(f, &o)
	addReviewFlags(cmd, &review)
	return cmd
}

// writePlanHTML writes the plan of p as one HTML page, with the graph of
// its objects and their direct neighbours.
func writePlanHTML(w io.Writer, p *engine.Prepared) error {
	v, err := graphView(p.Graph(), p.Plan, nil, graphOptions{})
	if err != nil {
		return err
	}
	return report.HTMLPlan(w, p.Plan, report.HTMLOptions{Graph: v})
}

// checkHTMLOutput accepts the outputs of plan: checkOutput's and html.
func checkHTMLOutput(output string) error {
	if output == "html" {
		return nil
	}
	if err := checkOutput(output); err != nil {
		return fmt.Errorf("unknown output format %q: want text, markdown, json or html", output)
	}
	return nil
}

func checkOutput(output string) error {
	switch output {
	case "text", "markdown", "json":
		return nil
	}
	return fmt.Errorf("unknown output format %q: want text, markdown or json", output)
}

// writePlan writes the report of p to w in the chosen format.
// diff chooses how updates show in text and markdown.
func (g *globals) writePlan(w io.Writer, p *plan.Plan, output string, diff report.DiffMode) error {
	md := report.DefaultMarkdownOptions()
	md.Diff = diff
	return writeReport(w, output, func() error { return report.JSON(w, p) },
		func() error { return report.Markdown(w, p, md) },
		func(opts report.TextOptions) error { opts.Diff = diff; return report.Text(w, p, opts) }, g.useColor(w))
}

// writeReport writes a report in the chosen format with the writer of
// that format: JSON, markdown, or text (coloured when color).
func writeReport(w io.Writer, output string, json, markdown func() error, text func(report.TextOptions) error, color bool) error {
	switch output {
	case "json":
		return json()
	case "markdown":
		if markdown != nil {
			return markdown()
		}
	}
	opts := report.DefaultTextOptions()
	opts.Color = color
	return text(opts)
}

// useColor decides --color=auto: colour when w is a terminal and NO_COLOR is
// not set.
func (g *globals) useColor(w io.Writer) bool {
	switch g.color {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// planExit maps a plan to the exit code: 1 with conflicts or invalid objects,
// 2 with changes when detailed, else 0.
func planExit(p *plan.Plan, detailed bool) error {
	if p.HasErrors() {
		return &ExitError{Code: 1, Err: fmt.Errorf("plan has %d conflicts and %d invalid objects", p.Summary.Conflict, p.Summary.Invalid)}
	}
	if detailed {
		if err := p.PolicyError(); err != nil {
			return &ExitError{Code: 1, Err: err}
		}
	}
	if detailed && p.HasChanges() {
		return &ExitError{Code: 2}
	}
	return nil
}
