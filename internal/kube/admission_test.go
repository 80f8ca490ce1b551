package kube

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDenial(t *testing.T) {
	status := func(code int32, msg string) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Message: msg}}
	}
	for _, c := range []struct {
		err  error
		want AdmissionDenial
		ok   bool
	}{
		{status(422, `configmaps "x" is forbidden: ValidatingAdmissionPolicy 'p1' with binding 'b1' denied request: no x allowed`),
			AdmissionDenial{Kind: "ValidatingAdmissionPolicy", Name: "p1", Binding: "b1", Reason: "no x allowed"}, true},
		{status(403, `admission webhook "deny.example.com" denied the request: images must be signed`),
			AdmissionDenial{Kind: "AdmissionWebhook", Name: "deny.example.com", Reason: "images must be signed"}, true},
		{status(400, `admission webhook "w.example.com" denied the request without explanation`),
			AdmissionDenial{Kind: "AdmissionWebhook", Name: "w.example.com", Reason: "without explanation"}, true},
		{status(422, `ConfigMap "x" is invalid: data: Invalid value`), AdmissionDenial{}, false},
		{nil, AdmissionDenial{}, false},
	} {
		got, ok := Denial(c.err)
		if ok != c.ok || got != c.want {
			t.Errorf("Denial(%v) = %+v, %v; want %+v, %v", c.err, got, ok, c.want, c.ok)
		}
	}
}

func TestAdmissionWarning(t *testing.T) {
	for _, c := range []struct {
		text string
		want AdmissionDenial
		ok   bool
	}{
		{"Validation failed for ValidatingAdmissionPolicy 'team-label' with binding 'team-label-ns': every ConfigMap needs a team label",
			AdmissionDenial{Kind: "ValidatingAdmissionPolicy", Name: "team-label", Binding: "team-label-ns", Reason: "every ConfigMap needs a team label"}, true},
		{"apps/v1beta1 Deployment is deprecated in v1.9+, unavailable in v1.16+; use apps/v1 Deployment", AdmissionDenial{}, false},
		{`unknown field "spec.foo"`, AdmissionDenial{}, false},
	} {
		got, ok := AdmissionWarning(c.text)
		if ok != c.ok || got != c.want {
			t.Errorf("AdmissionWarning(%q) = %+v, %v; want %+v, %v", c.text, got, ok, c.want, c.ok)
		}
	}
}
