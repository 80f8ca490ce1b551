package snapshot

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/object"
)

// Covered reports which kinds and namespaces a snapshot holds whole: with
// scope namespaces, every namespaced kind in the namespaces of refs; with
// scope cluster, everything; with scope managed, nothing. Skipped types
// are never covered.
func Covered(scope Scope, refs []object.Ref, skipped []Skipped) func(schema.GroupKind, string) bool {
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
		case ScopeCluster:
			return true
		case ScopeNamespaces:
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
