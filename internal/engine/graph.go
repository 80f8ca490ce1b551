package engine

import (
	"github.com/snapply/snapply/internal/graph"
)

// Graph returns the resource graph of the plan over its snapshot (see
// plan.Graph), built when the plan was analysed; its nodes keep their
// identities but not their objects (graph.ForgetObjects). Nil before the
// plan is analysed.
func (p *Prepared) Graph() *graph.Graph { return p.graph }
