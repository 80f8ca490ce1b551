package kube

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// TimeoutError says that a request ran out of its per-request timeout
// (--request-timeout). The API server enforces the same timeout and, over
// HTTP/2, may answer it by resetting the stream; without this error the
// user would read "stream error ... INTERNAL_ERROR" instead of the cause.
type TimeoutError struct {
	// Timeout is the per-request timeout that ran out.
	Timeout time.Duration
	// Err is what the transport or the server said.
	Err error
}

// Error implements error.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("request timed out after %s (--request-timeout): %v", e.Timeout, e.Err)
}

// Unwrap returns the transport error.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Explain returns the *TimeoutError inside err when there is one, without
// the wrappers client-go puts around it ("unexpected error when reading
// response body. Please retry. Original error: ..."), and err otherwise.
func Explain(err error) error {
	var te *TimeoutError
	if errors.As(err, &te) {
		return te
	}
	return err
}

// timeoutTransport turns a failure that happens once the per-request timeout
// has run out into a *TimeoutError, whether it comes from the round trip or
// from reading the body.
type timeoutTransport struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (t *timeoutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, t.explain(start, err)
	}
	resp.Body = &timeoutBody{ReadCloser: resp.Body, t: t, start: start}
	return resp, nil
}

func (t *timeoutTransport) explain(start time.Time, err error) error {
	if err == nil || errors.Is(err, io.EOF) || time.Since(start) < t.timeout {
		return err
	}
	return &TimeoutError{Timeout: t.timeout, Err: err}
}

type timeoutBody struct {
	io.ReadCloser
	t     *timeoutTransport
	start time.Time
}

func (b *timeoutBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	return n, b.t.explain(b.start, err)
}
