package engine

import (
	"github.com/snapply/snapply/internal/graph"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/snapshot"
)

// Graph returns the resource graph of the plan over its snapshot (see
// plan.Graph); nil before the plan is computed.
func (p *Prepared) Graph() *graph.Graph {
	if p.Plan == nil || p.live == nil {
		return nil
	}
	return plan.Graph(p.Plan, p.live.Index(), snapshot.Covered(p.scope, p.refs, p.live.Skipped))
}
