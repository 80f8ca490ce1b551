package engine

import (
	"time"

	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/snapshot"
)

// analyze adds field diffs, risks and the image inventory to the plan.
func (p *Prepared) analyze() {
	start := time.Now()
	plan.Analyze(p.Plan, plan.AnalyzeOptions{
		Schemas: p.Client,
		Live:    p.live.Index(),
		Covered: snapshot.Covered(p.scope, p.refs, p.live.Skipped),
		Redact:  p.Store.Redactor().Redact,
	})
	p.engine.progressf(StagePlan, "analyzed the plan (field diffs, risks, images) in %s", since(start))
}
