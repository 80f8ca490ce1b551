package apply

import (
	"github.com/snapply/snapply/internal/object"
)

// Wave is one step of an apply. Objects of a wave are applied concurrently;
// a wave starts when the one before it is done.
type Wave int

// The waves, in order.
const (
	// WaveDefinitions holds CustomResourceDefinitions and Namespaces: every
	// other object may need them. CRDs are waited for until Established.
	WaveDefinitions Wave = iota
	// WavePrerequisites holds what workloads refer to: RBAC, service
	// accounts, classes, quotas, ConfigMaps, Secrets, volume claims.
	WavePrerequisites
	// WaveWorkloads holds everything else.
	WaveWorkloads
	// WaveWebhooks holds admission webhooks and policies, last, so that a
	// webhook never intercepts the objects of its own deploy before its
	// backend runs.
	WaveWebhooks
	numWaves
)

// String names the wave for progress and reports.
func (w Wave) String() string {
	switch w {
	case WaveDefinitions:
		return "definitions"
	case WavePrerequisites:
		return "prerequisites"
	case WaveWorkloads:
		return "workloads"
	case WaveWebhooks:
		return "webhooks"
	}
	return "unknown"
}

type gk struct{ group, kind string }

var waveOf = map[gk]Wave{
	{"apiextensions.k8s.io", "CustomResourceDefinition"}: WaveDefinitions,
	{"", "Namespace"}: WaveDefinitions,

	{"rbac.authorization.k8s.io", "ClusterRole"}:        WavePrerequisites,
	{"rbac.authorization.k8s.io", "ClusterRoleBinding"}: WavePrerequisites,
	{"rbac.authorization.k8s.io", "Role"}:               WavePrerequisites,
	{"rbac.authorization.k8s.io", "RoleBinding"}:        WavePrerequisites,
	{"", "ServiceAccount"}:                              WavePrerequisites,
	{"", "ConfigMap"}:                                   WavePrerequisites,
	{"", "Secret"}:                                      WavePrerequisites,
	{"", "PersistentVolume"}:                            WavePrerequisites,
	{"", "PersistentVolumeClaim"}:                       WavePrerequisites,
	{"", "ResourceQuota"}:                               WavePrerequisites,
	{"", "LimitRange"}:                                  WavePrerequisites,
	{"scheduling.k8s.io", "PriorityClass"}:              WavePrerequisites,
	{"storage.k8s.io", "StorageClass"}:                  WavePrerequisites,
	{"networking.k8s.io", "IngressClass"}:               WavePrerequisites,
	{"node.k8s.io", "RuntimeClass"}:                     WavePrerequisites,
	{"policy", "PodDisruptionBudget"}:                   WavePrerequisites,

	{"admissionregistration.k8s.io", "MutatingWebhookConfiguration"}:     WaveWebhooks,
	{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"}:   WaveWebhooks,
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicy"}:        WaveWebhooks,
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"}: WaveWebhooks,
	{"admissionregistration.k8s.io", "MutatingAdmissionPolicy"}:          WaveWebhooks,
	{"admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"}:   WaveWebhooks,
}

// WaveOf returns the wave an object is applied in.
func WaveOf(r object.Ref) Wave {
	if w, ok := waveOf[gk{r.Group, r.Kind}]; ok {
		return w
	}
	return WaveWorkloads
}

// PruneOrder returns the step of the prune an object is deleted in: 0 for
// namespaced objects, 1 for cluster-scoped ones, 2 for Namespaces and CRDs,
// which take everything inside them along.
func PruneOrder(r object.Ref) int {
	switch {
	case WaveOf(r) == WaveDefinitions:
		return 2
	case r.Namespace == "":
		return 1
	}
	return 0
}
