package engine

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/snapshot"
)

// analyze adds field diffs, risks and the image inventory to the plan.
func (p *Prepared) analyze() {
	start := time.Now()
	plan.Analyze(p.Plan, plan.AnalyzeOptions{
		Schemas: p.Client,
		Live:    p.live.Index(),
		Covered: covered(p.scope, p.refs, p.live.Skipped),
		Redact:  p.Store.Redactor().Redact,
	})
	p.engine.progressf(StagePlan, "analyzed the plan (field diffs, risks, images) in %s", since(start))
}

// covered reports which kinds and namespaces a snapshot holds whole: with
// scope namespaces, every namespaced kind in the namespaces of refs; with
// scope cluster, everything; with scope managed, nothing. Skipped types
// are never covered.
func covered(scope snapshot.Scope, refs []object.Ref, skipped []snapshot.Skipped) func(schema.GroupKind, string) bool {
	namespaces := map[string]bool{}
	for _, r := range refs {
		if r.Namespace != "" {
			namespaces[r.Namespace] = true
		}
		if r.Group == "" && r.Kind == "Namespace" {
			namespaces[r.Name] = true
		}
	}
	skippedGroups := map[string]bool{}
	skippedResources := map[schema.GroupResource]bool{}
	for _, s := range skipped {
		if s.GVR.Resource == "" {
			skippedGroups[s.GVR.Group] = true
		} else {
			skippedResources[s.GVR.GroupResource()] = true
		}
	}
	return func(gk schema.GroupKind, ns string) bool {
		if skippedGroups[gk.Group] || skippedResources[schema.GroupResource{Group: gk.Group, Resource: resourceOf(gk.Kind)}] {
			return false
		}
		switch scope {
		case snapshot.ScopeCluster:
			return true
		case snapshot.ScopeNamespaces:
			return ns != "" && namespaces[ns]
		}
		return false
	}
}

// resourceOf guesses the resource of the kinds references point at
// (ConfigMap -> configmaps, Ingress -> ingresses, Policy -> policies).
func resourceOf(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"):
		return k + "es"
	case strings.HasSuffix(k, "y"):
		return strings.TrimSuffix(k, "y") + "ies"
	}
	return k + "s"
}
