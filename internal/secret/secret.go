// Package secret keeps the values of Kubernetes Secrets out of everything
// snapply writes: the store, plan diffs, reports and logs.
//
// A Redactor replaces every value of a Secret's data and stringData, and its
// kubectl last-applied annotation, by a keyed digest such as
// "<redacted sha256:3f1a9c0b7e2d>". Equal values give equal digests, so a
// diff can still say which keys of a Secret changed without showing them.
// Values lists the clear values of a Secret so that a caller can mask them
// in logs, and tests can search outputs for them.
package secret

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// LastAppliedAnnotation is the annotation in which kubectl client-side apply
// keeps the last applied object, Secret values included.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// IsSecret reports whether u is a core Secret (group "", kind Secret). An
// object of kind Secret without an apiVersion counts as one: redacting too
// much is safe, too little is not.
func IsSecret(u *unstructured.Unstructured) bool {
	if u == nil || u.Object == nil {
		return false
	}
	gvk := u.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}
