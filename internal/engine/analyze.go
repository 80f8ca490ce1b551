package engine

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/snapshot"
)

// analyze adds field diffs, risks and the image inventory to the plan.
func (p *Prepared) analyze() {
	start := time.Now()
	live, covered := p.live.Index(), snapshot.Covered(p.scope, p.refs, p.live.Skipped)
	plan.Analyze(p.Plan, plan.AnalyzeOptions{
		Schemas: p.Client,
		Live:    live,
		Covered: covered,
		Redact:  p.Store.Redactor().Redact,
	})
	// The graph for drawings keeps identities and edges, not the objects.
	p.graph = plan.Graph(p.Plan, live, covered)
	p.graph.ForgetObjects()
	// Neither the objects nor the schemas are needed again: an apply of
	// thousands of objects should not carry them.
	p.Plan.ForgetObjects()
	if p.stopPrefetch != nil {
		p.stopPrefetch()
	}
	p.Client.ForgetSchemas()
	p.engine.progressf(StagePlan, "analyzed the plan (field diffs, risks, images) in %s", since(start))
}

// prefetchSchemas reads and parses the server's schemas of the desired
// set's group-versions in the background, while the dry runs run, so that
// the analysis finds them ready.
func (p *Prepared) prefetchSchemas() {
	seen := map[schema.GroupVersion]bool{}
	var gvs []schema.GroupVersion
	for _, d := range p.Desired {
		gv := d.Ref.GroupVersionKind().GroupVersion()
		if !seen[gv] {
			seen[gv] = true
			gvs = append(gvs, gv)
		}
	}
	stop := make(chan struct{})
	p.stopPrefetch = func() { close(stop) }
	go func() {
		for _, gv := range gvs {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = p.Client.TypeConverter(gv) // an error is cached and met again by the analysis
		}
	}()
}
