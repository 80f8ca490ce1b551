package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/report"
)

func newPlanCommand(g *globals) *cobra.Command {
	o := prepareOptions{}
	var output string
	var detailed bool
	cmd := &cobra.Command{
		Use:   "plan PATH",
		Short: "Show what an apply would change, validated by the API server",
		Long: `plan renders PATH (a kustomization directory, a YAML file, or a directory of
YAML files), snapshots the live state of the cluster into the store file, and
runs a server-side-apply dry run for every object. Nothing in the cluster
changes.

Exit codes: 0 success; 1 error, or a plan with conflicts or invalid objects;
with --detailed-exitcode, 2 when the plan has changes (and no errors).`,
		Example: `  snapply plan ./overlays/prod
  snapply plan ./overlays/prod -o json --store /tmp/prod.db
  snapply plan ./manifests --context staging --detailed-exitcode`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			p, err := g.prepare(cmd.Context(), args[0], o)
			if p != nil {
				defer p.close()
			}
			if err != nil {
				return err
			}
			if err := g.render(g.io.Out, p.plan, output); err != nil {
				return err
			}
			return planExit(p.plan, detailed)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "text", "output format: text, markdown or json")
	f.BoolVar(&detailed, "detailed-exitcode", false, "exit 0 when nothing changes, 2 when something changes, 1 on error")
	addCommonFlags(f, &o)
	return cmd
}

// addCommonFlags adds the flags plan and apply share.
func addCommonFlags(f *pflag.FlagSet, o *prepareOptions) {
	f.StringVar(&o.storePath, "store", "snapply.db", "store file: created if missing, appended to if present")
	f.StringVar(&o.scope, "scope", "namespaces", "what the snapshot holds: managed (the desired objects), namespaces (all objects of their namespaces) or cluster")
	f.IntVar(&o.concurrency, "concurrency", 16, "requests in flight")
	f.BoolVar(&o.force, "force-conflicts", false, "take fields owned by other field managers (every object; or annotate one object with "+plan.ForceAnnotation+`: "true")`)
	f.BoolVar(&o.allowEmpty, "allow-empty", false, "accept a PATH that renders no object (apply would then prune everything it applied before)")
	f.StringVar(&o.name, "name", "snapply", "inventory name: the ApplySet parent Secret and its Lease; one per environment")
	f.StringVar(&o.inventoryNS, "inventory-namespace", "default", "namespace of the inventory Secret and Lease")
}

func checkOutput(output string) error {
	switch output {
	case "text", "markdown", "json":
		return nil
	}
	return fmt.Errorf("unknown output format %q: want text, markdown or json", output)
}

// render writes p to w in the chosen format.
func (g *globals) render(w io.Writer, p *plan.Plan, output string) error {
	switch output {
	case "json":
		return report.JSON(w, p)
	case "markdown":
		return report.Markdown(w, p, report.DefaultMarkdownOptions())
	}
	opts := report.DefaultTextOptions()
	opts.Color = g.useColor(w)
	return report.Text(w, p, opts)
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
	if detailed && p.HasChanges() {
		return &ExitError{Code: 2}
	}
	return nil
}
