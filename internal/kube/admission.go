package kube

import (
	"errors"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// AdmissionDenial is the API server's admission chain refusing a request
// (a ValidatingAdmissionPolicy in Deny mode, or a validating or mutating
// webhook), or warning about it (a ValidatingAdmissionPolicy in Warn mode:
// see AdmissionWarning).
type AdmissionDenial struct {
	// Kind is "ValidatingAdmissionPolicy" or "AdmissionWebhook".
	Kind string
	// Name names the policy (and Binding its binding) or the webhook.
	Name, Binding string
	// Reason is what the policy or webhook said.
	Reason string
}

// Rule names the denial as a policy rule: "ValidatingAdmissionPolicy/NAME"
// or "AdmissionWebhook/NAME".
func (d AdmissionDenial) Rule() string { return d.Kind + "/" + d.Name }

// How the API server words the denials (k8s.io/apiserver's
// validatingadmissionpolicy and webhook admission plugins).
var (
	vapDenied     = regexp.MustCompile(`ValidatingAdmissionPolicy '([^']+)' with binding '([^']*)' denied request: ?(.*)`)
	webhookDenied = regexp.MustCompile(`admission webhook "([^"]+)" denied the request:? ?(.*)`)
	vapWarned     = regexp.MustCompile(`^Validation failed for ValidatingAdmissionPolicy '([^']+)' with binding '([^']*)': ?(.*)$`)
)

// AdmissionWarning returns the ValidatingAdmissionPolicy in Warn mode that
// a warning of the API server comes from, and false when the warning is
// another one (a deprecated API, an unknown field, a webhook's own words).
func AdmissionWarning(text string) (AdmissionDenial, bool) {
	m := vapWarned.FindStringSubmatch(strings.Join(strings.Fields(text), " "))
	if m == nil {
		return AdmissionDenial{}, false
	}
	return AdmissionDenial{Kind: "ValidatingAdmissionPolicy", Name: m[1], Binding: m[2], Reason: m[3]}, true
}

// Denial returns the admission denial err carries, and false when err is
// not one.
func Denial(err error) (AdmissionDenial, bool) {
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) {
		return AdmissionDenial{}, false
	}
	msg := strings.Join(strings.Fields(status.Status().Message), " ")
	if m := vapDenied.FindStringSubmatch(msg); m != nil {
		return AdmissionDenial{Kind: "ValidatingAdmissionPolicy", Name: m[1], Binding: m[2], Reason: m[3]}, true
	}
	if m := webhookDenied.FindStringSubmatch(msg); m != nil {
		return AdmissionDenial{Kind: "AdmissionWebhook", Name: m[1], Reason: m[2]}, true
	}
	return AdmissionDenial{}, false
}
