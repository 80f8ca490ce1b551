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
