package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/graph"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/report"
)

// graphOptions are the flags of the graph command.
type graphOptions struct {
	output string
	focus  string
	depth  int
}

func newGraphCommand(g *globals) *cobra.Command {
	o := engine.DefaultOptions()
	var opts graphOptions
	cmd := &cobra.Command{
		Use:   "graph PATH",
		Short: "Draw the objects of PATH, what refers to what, and the plan's action on each",
		Long: `graph plans PATH like plan does (nothing in the cluster changes) and draws its
resource graph: the desired objects and the objects the plan deletes, each
with the plan's action (create, update, delete, unchanged, conflict, invalid,
pending; "risk" when the change carries one), the live objects they refer to,
and references to objects that do not exist ("missing"). Edges say how one
object refers to another: owner, selects, env-from, env-key, volume,
service-account, image-pull-secret, backend, parent-ref, gateway-class,
scale-target, disruption-budget, role-ref, subject, defined-by.

--focus keeps the neighbourhood of one object, --depth edges away (either
direction, owned objects such as ReplicaSets included).`,
		Example: `  snapply graph ./overlays/prod -o mermaid
  snapply graph ./overlays/prod -o dot | dot -Tsvg > graph.svg
  snapply graph ./overlays/prod --focus ConfigMap/prod/settings --depth 2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(report.GraphFormats, opts.output) {
				return fmt.Errorf("unknown output format %q: want %s", opts.output, strings.Join(report.GraphFormats, ", "))
			}
			var focus *object.Selector
			if opts.focus != "" {
				sel, err := object.ParseSelector(opts.focus)
				if err != nil {
					return fmt.Errorf("--focus: %w", err)
				}
				focus = &sel
			}
			p, err := g.newEngine().Plan(cmd.Context(), engine.Target{Path: args[0]}, o)
			if p != nil {
				defer p.Close()
			}
			if err != nil {
				return err
			}
			v, err := graphView(p.Graph(), p.Plan, focus, opts)
			if err != nil {
				return err
			}
			return report.Graph(g.io.Out, v, opts.output)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.output, "output", "o", "text", "output format: "+strings.Join(report.GraphFormats, ", "))
	f.StringVar(&opts.focus, "focus", "", `draw only the neighbourhood of one object: Kind/namespace/name, Kind/name, or "kind.group/name -n namespace"`)
	f.IntVar(&opts.depth, "depth", 1, "with --focus, how many edges away from the object to draw")
	addEngineFlags(f, &o)
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return report.GraphFormats, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// graphView chooses the drawing: the plan's objects and their direct
// neighbours, or the neighbourhood of the focus.
func graphView(gr *graph.Graph, p *plan.Plan, focus *object.Selector, o graphOptions) (*graph.View, error) {
	opts := graph.ViewOptions{Status: plan.GraphStatus(p), Depth: 1}
	if focus != nil {
		var seeds []object.Key
		for k, n := range gr.Nodes {
			if focus.Matches(n.Ref) {
				seeds = append(seeds, k)
			}
		}
		if len(seeds) == 0 {
			return nil, fmt.Errorf("--focus %s: no such object in the plan or the snapshot", o.focus)
		}
		if o.depth < 0 {
			return nil, fmt.Errorf("--depth %d: want 0 or more", o.depth)
		}
		opts.Seeds, opts.Depth, opts.Children = seeds, o.depth, true
	}
	return gr.View(opts), nil
}
