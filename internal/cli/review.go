package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/report"
)

// reviewOptions are the flags plan and apply share about what a reviewer
// sees and what stops a run: --diff and --fail-on.
type reviewOptions struct {
	diff   string
	failOn string
}

// addReviewFlags adds --diff and --fail-on, with their shell completions.
func addReviewFlags(cmd *cobra.Command, r *reviewOptions) {
	f := cmd.Flags()
	f.StringVar(&r.diff, "diff", string(report.DiffStructural), "how updates are shown: structural (changed fields, list items by key), unified (YAML diff) or both")
	f.StringVar(&r.failOn, "fail-on", "", "comma-separated risk kinds that fail the run (exit 1; apply then changes nothing): "+riskKindList())
	_ = cmd.RegisterFlagCompletionFunc("diff", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		out := make([]string, len(report.DiffModes))
		for i, m := range report.DiffModes {
			out[i] = string(m)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("fail-on", completeRiskKinds)
}

// completeRiskKinds completes the last kind of a comma-separated list.
func completeRiskKinds(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done, _ := splitLast(toComplete)
	var out []string
	for _, k := range plan.RiskKinds {
		if !strings.Contains(","+done, ","+string(k)+",") {
			out = append(out, done+string(k))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// splitLast splits "a,b,c" into "a,b," and "c".
func splitLast(s string) (done, last string) {
	i := strings.LastIndex(s, ",")
	return s[:i+1], s[i+1:]
}

func riskKindList() string {
	names := make([]string, len(plan.RiskKinds))
	for i, k := range plan.RiskKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// parse checks the flags.
// An empty --diff (a command without the flag) is structural.
func (r reviewOptions) parse() (report.DiffMode, []plan.RiskKind, error) {
	if r.diff == "" {
		r.diff = string(report.DiffStructural)
	}
	mode, err := report.ParseDiffMode(r.diff)
	if err != nil {
		return "", nil, fmt.Errorf("--diff: %w", err)
	}
	kinds, err := plan.ParseRiskKinds(r.failOn)
	if err != nil {
		return "", nil, fmt.Errorf("--fail-on: %w", err)
	}
	return mode, kinds, nil
}

// failOnExit returns exit 1 when p has risks of the kinds of --fail-on.
func failOnExit(p *plan.Plan, kinds []plan.RiskKind, what string) error {
	hit := p.RisksOf(kinds)
	if len(hit) == 0 {
		return nil
	}
	var parts []string
	for _, rc := range p.RiskCounts() {
		for _, k := range hit {
			if rc.Kind == k {
				parts = append(parts, fmt.Sprintf("%d %s", rc.Count, k))
			}
		}
	}
	return &ExitError{Code: 1, Err: fmt.Errorf("plan has risks that --fail-on names: %s; %s", strings.Join(parts, ", "), what)}
}
