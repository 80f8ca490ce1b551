package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/drift"
	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/report"
)

func newDriftCommand(g *globals) *cobra.Command {
	o := engine.DefaultOptions()
	var d engine.DriftOptions
	var output string
	cmd := &cobra.Command{
		Use:   "drift PATH",
		Short: "Compare the cluster with git: who changed what, and when",
		Long: `drift renders PATH (git), snapshots the live state of the cluster into the
store file as plan does, and compares every object the inventory (--name)
manages with git, field by field. Nothing in the cluster changes.

It reports:
  - the fields git sets whose live value differs, each with the field
    manager that wrote the live value and when, from managedFields:
    spec.replicas: git 3, live 5 (kubectl-edit, 2026-11-20T14:02:05Z);
  - the fields another manager took from snapply with a force-apply;
  - objects in git that are not in the cluster (deleted out of band);
  - inventory members that are no longer in git (the next apply prunes them);
  - with --orphans, the objects of the managed namespaces that belong to no
    inventory and that nothing owns.

Each drifted object comes with the patch that puts its live values into
git (YAML to paste into the manifest or a kustomize patch) and the diff a
re-apply makes (live to git).
Secret values are never shown: they are compared as keyed digests.

Exit codes: 0 the cluster matches git; 2 drift; 1 error (or an object the
server refuses).`,
		Example: `  snapply drift ./overlays/prod --name prod
  snapply drift ./overlays/prod --name prod --orphans -o markdown
  snapply drift ./manifests -o json --store /tmp/drift.db`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			r, err := g.newEngine().Drift(cmd.Context(), engine.Target{Path: args[0]}, o, d)
			if err != nil {
				return err
			}
			if err := g.writeDrift(g.io.Out, r, output); err != nil {
				return err
			}
			return driftExit(r)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "text", "output format: text, markdown or json")
	f.BoolVar(&d.Orphans, "orphans", false, "also report the objects of the managed namespaces that no inventory and no owner claims")
	addEngineFlags(f, &o)
	_ = f.MarkHidden("force-conflicts")
	_ = f.MarkHidden("policy")
	return cmd
}

// writeDrift writes the drift report in the chosen format.
func (g *globals) writeDrift(w io.Writer, r *drift.Report, output string) error {
	return writeReport(w, output, func() error { return report.DriftJSON(w, r) },
		func() error { return report.DriftMarkdown(w, r, report.DriftMarkdownOptions{}) },
		func(opts report.TextOptions) error { return report.DriftText(w, r, opts) }, g.useColor(w))
}

// driftExit maps a drift report to the exit code: 1 when the server refuses
// a git object, 2 on drift, else 0.
func driftExit(r *drift.Report) error {
	if r.Summary.Invalid > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("drift: the server refuses %d objects of git", r.Summary.Invalid)}
	}
	if r.HasDrift() {
		return &ExitError{Code: 2}
	}
	return nil
}
