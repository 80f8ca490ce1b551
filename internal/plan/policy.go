package plan

import "fmt"

// PolicyLevel is how a policy verdict weighs. The strings are part of the
// JSON contract.
type PolicyLevel string

// The levels of a policy verdict.
const (
	// PolicyDeny blocks: apply refuses to change anything, and plan
	// exits 1 under --detailed-exitcode.
	PolicyDeny PolicyLevel = "deny"
	// PolicyWarn only reports.
	PolicyWarn PolicyLevel = "warn"
)

// PolicyResult is one verdict of a policy on an object: a Rego rule of
// --policy (rule "deny", "warn", "violation", or one with such a prefix),
// or the cluster's admission chain (rule "ValidatingAdmissionPolicy/NAME"
// or "AdmissionWebhook/NAME"; a ValidatingAdmissionPolicy in Warn mode
// gives a warn verdict).
type PolicyResult struct {
	Rule    string      `json:"rule"`
	Level   PolicyLevel `json:"level"`
	Message string      `json:"message"`
	// Admission marks a verdict of the cluster's admission chain. A deny
	// makes the object invalid, and apply leaves it out as it leaves out
	// every invalid object, rather than refusing the whole plan; a warn
	// only reports.
	Admission bool `json:"admission,omitempty"`
}

// PolicyCounts counts the policy verdicts of the plan by level.
func (p *Plan) PolicyCounts() (deny, warn int) {
	for _, c := range p.Changes {
		for _, r := range c.Policy {
			switch r.Level {
			case PolicyDeny:
				deny++
			case PolicyWarn:
				warn++
			}
		}
	}
	return deny, warn
}

// Denied returns the changes a policy of --policy denies (not counting
// the admission chain's denials, which make the object invalid).
func (p *Plan) Denied() []Change {
	var out []Change
	for _, c := range p.Changes {
		for _, r := range c.Policy {
			if r.Level == PolicyDeny && !r.Admission {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// PolicyError returns the error of a plan that a policy of --policy
// denies, naming the first denial; nil when none does.
func (p *Plan) PolicyError() error {
	denied := p.Denied()
	if len(denied) == 0 {
		return nil
	}
	c := denied[0]
	var first PolicyResult
	for _, r := range c.Policy {
		if r.Level == PolicyDeny && !r.Admission {
			first = r
			break
		}
	}
	more := ""
	if len(denied) > 1 {
		more = fmt.Sprintf(" (and %d more objects)", len(denied)-1)
	}
	where := c.Ref.String()
	if c.Source.File != "" {
		where += " (" + c.Source.String() + ")"
	}
	return fmt.Errorf("%s: denied by policy %s: %s%s", where, first.Rule, first.Message, more)
}
