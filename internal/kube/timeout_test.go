package kube

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestTimeoutTransport: a response body the server breaks off once the
// request timeout has run out reads as a *TimeoutError naming the timeout;
// one it breaks off earlier keeps its own error.
func TestTimeoutTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		_, _ = io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		if d, err := time.ParseDuration(r.URL.Query().Get("sleep")); err == nil {
			time.Sleep(d)
		}
		panic(http.ErrAbortHandler) // what the API server's timeout filter does
	}))
	t.Cleanup(srv.Close)

	const timeout = 500 * time.Millisecond
	client := &http.Client{Transport: &timeoutTransport{next: srv.Client().Transport, timeout: timeout}}
	read := func(sleep time.Duration) error {
		resp, err := client.Get(srv.URL + "?sleep=" + sleep.String())
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return err
	}

	err := read(2 * timeout)
	var te *TimeoutError
	if !errors.As(err, &te) || te.Timeout != timeout {
		t.Fatalf("body broken off after the timeout: %v (%T), want a *TimeoutError of %s", err, err, timeout)
	}
	if want := "request timed out after 500ms (--request-timeout)"; !strings.HasPrefix(Message(err), want) {
		t.Errorf("Message = %q, want it to start with %q", Message(err), want)
	}
	wrapped := errors.New("unexpected error when reading response body. Please retry. Original error: " + err.Error())
	if Explain(wrapped) != wrapped {
		t.Errorf("Explain changed an error that does not wrap a timeout")
	}

	if err := read(0); err == nil || errors.As(err, &te) {
		t.Errorf("body broken off before the timeout: %v, want its own error", err)
	}
}
