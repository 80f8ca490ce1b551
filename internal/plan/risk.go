package plan

import (
	"fmt"
	"slices"
	"strings"
)

// RiskKind names a kind of risk a plan flags for reviewers.
type RiskKind string

// The risk kinds, from the most to the least severe. The strings are part
// of the JSON contract and the values of --fail-on.
const (
	// RiskReplace: the server says a field is immutable; the apply fails
	// unless the object is deleted and re-created.
	RiskReplace RiskKind = "replace"
	// RiskDataLoss: a delete or change that loses data: a
	// PersistentVolumeClaim, Namespace, CRD or StatefulSet deleted, a
	// change to volumeClaimTemplates, a Service or PVC deleted while a
	// workload still uses it.
	RiskDataLoss RiskKind = "data-loss"
	// RiskBrokenRef: after the plan, a reference points at nothing.
	RiskBrokenRef RiskKind = "broken-ref"
	// RiskRBAC: a Role or ClusterRole gains verbs, resources or
	// wildcards, or a binding to cluster-admin or to a ClusterRole with
	// wildcards is added.
	RiskRBAC RiskKind = "rbac"
	// RiskExposure: a new LoadBalancer or NodePort Service, or a new
	// Ingress host.
	RiskExposure RiskKind = "exposure"
	// RiskImage: an image tag moves to latest, to no tag, or to another
	// registry.
	RiskImage RiskKind = "image"
	// RiskNoRestart: a ConfigMap or Secret that workloads consume changes
	// and their pod template does not: they keep the old values.
	RiskNoRestart RiskKind = "no-restart"
	// RiskWarning: the API server warned about the object's dry run.
	RiskWarning RiskKind = "warning"
)

// RiskKinds lists every risk kind, from the most to the least severe: the
// order reports show them in.
var RiskKinds = []RiskKind{RiskReplace, RiskDataLoss, RiskBrokenRef, RiskRBAC, RiskExposure, RiskImage, RiskNoRestart, RiskWarning}

// Risk is one thing about a change that a reviewer should look at.
type Risk struct {
	// Kind is the short word, like "data-loss".
	Kind RiskKind `json:"kind"`
	// Message says what and why in one sentence, and how to act when
	// there is a way out.
	Message string `json:"message"`
}

// RiskCount is the number of risks of one kind in a plan.
type RiskCount struct {
	Kind  RiskKind
	Count int
}

// RiskCounts counts the risks of p by kind, in the order of RiskKinds,
// kinds without risks left out.
func (p *Plan) RiskCounts() []RiskCount {
	n := map[RiskKind]int{}
	for _, c := range p.Changes {
		for _, r := range c.Risks {
			n[r.Kind]++
		}
	}
	var out []RiskCount
	for _, k := range RiskKinds {
		if n[k] > 0 {
			out = append(out, RiskCount{Kind: k, Count: n[k]})
		}
	}
	return out
}

// RisksOf returns the kinds among kinds that p has risks of, in the order
// of RiskKinds.
func (p *Plan) RisksOf(kinds []RiskKind) []RiskKind {
	var out []RiskKind
	for _, rc := range p.RiskCounts() {
		if slices.Contains(kinds, rc.Kind) {
			out = append(out, rc.Kind)
		}
	}
	return out
}

// ParseRiskKinds parses a comma-separated list of risk kinds, like
// "data-loss,broken-ref,rbac"; empty gives none.
func ParseRiskKinds(s string) ([]RiskKind, error) {
	var out []RiskKind
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k := RiskKind(part)
		if !slices.Contains(RiskKinds, k) {
			names := make([]string, len(RiskKinds))
			for i, k := range RiskKinds {
				names[i] = string(k)
			}
			return nil, fmt.Errorf("unknown risk kind %q: want one or more of %s", part, strings.Join(names, ", "))
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// sortRisks orders risks by severity, then message, and drops duplicates.
func sortRisks(rs []Risk) []Risk {
	slices.SortStableFunc(rs, func(a, b Risk) int {
		if d := slices.Index(RiskKinds, a.Kind) - slices.Index(RiskKinds, b.Kind); d != 0 {
			return d
		}
		return strings.Compare(a.Message, b.Message)
	})
	return slices.Compact(rs)
}
