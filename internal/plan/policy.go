package plan

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
// or "ValidatingWebhook/NAME").
type PolicyResult struct {
	Rule    string      `json:"rule"`
	Level   PolicyLevel `json:"level"`
	Message string      `json:"message"`
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

// Denied returns the changes a policy denies.
func (p *Plan) Denied() []Change {
	var out []Change
	for _, c := range p.Changes {
		for _, r := range c.Policy {
			if r.Level == PolicyDeny {
				out = append(out, c)
				break
			}
		}
	}
	return out
}
