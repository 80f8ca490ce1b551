package kube

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UnreachableError says that the API server could not be reached at all.
type UnreachableError struct {
	Server string
	Err    error
}

// Error implements error.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the API server at %s: %v", e.Server, e.Err)
}

// Unwrap returns the transport error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Unreachable wraps err in an UnreachableError when it is a transport failure
// (connection refused, DNS, timeout, TLS); other errors are returned as they
// are.
func Unreachable(server string, err error) error {
	if err == nil || !IsTransport(err) {
		return err
	}
	return &UnreachableError{Server: server, Err: rootCause(err)}
}

// IsTransport reports whether err is a failure to talk to the server at all,
// as opposed to an answer from it.
func IsTransport(err error) bool {
	if err == nil {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return false
	}
	var netErr net.Error
	var urlErr *url.Error
	var opErr *net.OpError
	return errors.As(err, &netErr) || errors.As(err, &urlErr) || errors.As(err, &opErr) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// rootCause strips url.Error's "Get \"https://...\":" prefix, which repeats
// the server address the message already names.
func rootCause(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err
	}
	return err
}

// Conflict is one field that applying would take from another field manager.
type Conflict struct {
	// Field is the path of the field, like ".spec.replicas".
	Field string
	// Manager is the field manager that owns it.
	Manager string
}

// conflictManager matches the manager in the server's cause message:
// `conflict with "kubectl-edit" using apps/v1` or, for several fields,
// `conflicts with "kubectl-edit" using apps/v1:` .
var conflictManager = regexp.MustCompile(`conflicts? with "([^"]+)"`)

// Conflicts returns the fields and their managers when err is the API
// server's 409 answer to a server-side apply, and false otherwise.
func Conflicts(err error) ([]Conflict, bool) {
	if !apierrors.IsConflict(err) {
		return nil, false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return nil, false
	}
	st := status.Status()
	var out []Conflict
	if st.Details != nil {
		for _, cause := range st.Details.Causes {
			if cause.Type != metav1.CauseTypeFieldManagerConflict {
				continue
			}
			c := Conflict{Field: cause.Field}
			if m := conflictManager.FindStringSubmatch(cause.Message); m != nil {
				c.Manager = m[1]
			}
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		// A 409 that is not a field conflict (an optimistic-lock failure):
		// not a conflict between managers.
		return nil, false
	}
	return out, true
}

// IsInvalid reports whether err is the API server refusing the object itself
// in answer to an apply: a schema error, an unknown field under strict
// validation, an immutable field, a bad request, an unknown resource type or
// a missing namespace (the only two things an apply can find missing).
func IsInvalid(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsNotFound(err) ||
		apierrors.IsRequestEntityTooLargeError(err) || isTypeError(err)
}

// typedPatch is how the API server words a server-side apply whose fields do
// not fit the schema (a string for an integer); it answers 500 for it.
const typedPatch = "failed to create typed patch object ("

// convertNew is how it words a value that cannot be decoded into its type
// (invalid base64 in a Secret's data); it answers 500 for that too.
const convertNew = "failed to convert new object ("

func isTypeError(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return (apierrors.IsInternalError(err) || isUnknown500(err)) && (strings.Contains(msg, typedPatch) || strings.Contains(msg, convertNew))
}

// isUnknown500 reports a 500 answer without a reason.
func isUnknown500(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code == 500
}

// Message returns the server's message for err on one line, without the
// "<Kind> <name> is invalid:" prefix that repeats the object's name.
func Message(err error) string {
	err = Explain(err)
	msg := err.Error()
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		msg = status.Status().Message
	}
	if i := strings.Index(msg, convertNew); i >= 0 {
		if j := strings.Index(msg[i:], "): "); j >= 0 {
			msg = msg[i+j+len("): "):]
		}
	}
	if i := strings.Index(msg, typedPatch); i >= 0 {
		if j := strings.Index(msg[i:], "): "); j >= 0 {
			msg = msg[i+j+len("): "):]
		}
	}
	if i := strings.Index(msg, " is invalid: "); i >= 0 && strings.Count(msg[:i], " ") <= 2 {
		msg = msg[i+len(" is invalid: "):]
	}
	return strings.Join(strings.Fields(msg), " ")
}
