package engine

import (
	"context"
	"time"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/policy"
)

// StagePolicy is the step that evaluates the policies of --policy.
const StagePolicy Stage = "policy"

// loadPolicies compiles the policies of o.PolicyDir, once per run; nil
// when there are none.
func (e *Engine) loadPolicies(ctx context.Context, o Options) (*policy.Set, error) {
	if o.PolicyDir == "" {
		return nil, nil
	}
	start := time.Now()
	set, err := policy.Load(ctx, o.PolicyDir)
	if err != nil {
		return nil, err
	}
	e.progressf(StagePolicy, "policy: compiled %d files of %s in %s", len(set.Files), o.PolicyDir, since(start))
	return set, nil
}

// evalPolicies adds the verdicts of the policies to every planned object:
// a desired one with the object as rendered (Secret values redacted), its
// action, and the live object of the snapshot (redacted too); one the plan
// deletes with its live object, for the delete rules.
func (p *Prepared) evalPolicies(ctx context.Context) error {
	if p.policies == nil {
		return nil
	}
	start := time.Now()
	desired := make(map[object.Key]object.Object, len(p.Desired))
	for _, d := range p.Desired {
		desired[d.Ref.Key()] = d
	}
	live := p.live.Index()
	redact := p.Store.Redactor().Redact
	n := 0
	for i := range p.Plan.Changes {
		c := &p.Plan.Changes[i]
		in := policy.Input{Action: c.Action}
		if l := live[c.Ref.Key()]; l != nil {
			in.Live = redact(l).Object
		}
		if d, ok := desired[c.Ref.Key()]; ok {
			in.Object = redact(d.Obj).Object
		} else if c.Action == plan.Delete && (in.Live != nil || c.Before != nil) {
			if in.Live == nil {
				in.Live = redact(c.Before).Object
			}
			in.Object = in.Live
		} else {
			continue
		}
		res, err := p.policies.Eval(ctx, in)
		if err != nil {
			return err
		}
		c.Policy = append(c.Policy, res...)
		n++
	}
	deny, warn := p.Plan.PolicyCounts()
	p.engine.progressf(StagePolicy, "policy: evaluated %d objects in %s: %d deny, %d warn", n, since(start), deny, warn)
	return nil
}
