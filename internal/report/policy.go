package report

import (
	"fmt"
	"strings"

	"github.com/snapply/snapply/internal/plan"
)

// The JSON of policy verdicts: per object `policy: [{rule, level,
// message}]`, and the counts at the top, `policy: {deny, warn}`.
type (
	jsonPolicy struct {
		Rule    string `json:"rule"`
		Level   string `json:"level"`
		Message string `json:"message"`
	}
	jsonPolicyCount struct {
		Deny int `json:"deny"`
		Warn int `json:"warn"`
	}
)

func toJSONPolicy(rs []plan.PolicyResult) []jsonPolicy {
	out := make([]jsonPolicy, 0, len(rs))
	for _, r := range rs {
		out = append(out, jsonPolicy{Rule: r.Rule, Level: string(r.Level), Message: r.Message})
	}
	return out
}

// policyCounts says "1 deny, 2 warn"; empty when no policy said anything.
func policyCounts(p *plan.Plan) string {
	deny, warn := p.PolicyCounts()
	if deny+warn == 0 {
		return ""
	}
	return fmt.Sprintf("%d deny, %d warn", deny, warn)
}

// policyBlockedLine says that apply refuses a plan a policy denies.
func policyBlockedLine(p *plan.Plan) string {
	denied := p.Denied()
	if len(denied) == 0 {
		return ""
	}
	return fmt.Sprintf("Denied by policy: %s. Apply refuses to change anything until the policies pass.", plural(len(denied), "object", "objects"))
}

// mdPolicyNote is the changes table's note on an object with verdicts.
func mdPolicyNote(c plan.Change) string {
	var deny, warn []string
	for _, r := range c.Policy {
		if r.Level == plan.PolicyDeny {
			deny = append(deny, mdCode(r.Rule))
		} else {
			warn = append(warn, mdCode(r.Rule))
		}
	}
	var parts []string
	if len(deny) > 0 {
		parts = append(parts, "**denied by policy** "+strings.Join(deny, ", "))
	}
	if len(warn) > 0 {
		parts = append(parts, "policy warning "+strings.Join(warn, ", "))
	}
	return strings.Join(parts, "; ")
}

// mdPolicyTable lists an object's verdicts in its details section.
func mdPolicyTable(c plan.Change) string {
	if len(c.Policy) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Policy:\n\n| level | rule | message |\n| --- | --- | --- |\n")
	for _, r := range c.Policy {
		level := string(r.Level)
		if r.Level == plan.PolicyDeny {
			level = "**deny**"
		}
		b.WriteString("| " + level + " | " + mdCode(r.Rule) + " | " + mdText(r.Message) + " |\n")
	}
	b.WriteString("\n")
	return b.String()
}
