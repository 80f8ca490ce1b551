package apply_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/snapply/snapply/internal/kube"
)

// faults makes the PATCH requests of a test fail before they reach the API
// server, one fault per request while it has any left, and counts them.
type faults struct {
	mu      sync.Mutex
	next    []func() (*http.Response, error)
	patches int
}

func (f *faults) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodPatch {
			return rt.RoundTrip(req)
		}
		f.mu.Lock()
		f.patches++
		var fault func() (*http.Response, error)
		if len(f.next) > 0 {
			fault, f.next = f.next[0], f.next[1:]
		}
		f.mu.Unlock()
		if fault != nil {
			if req.Body != nil {
				io.Copy(io.Discard, req.Body)
				req.Body.Close()
			}
			return fault()
		}
		return rt.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// reset is a connection reset by a load balancer.
func reset() (*http.Response, error) { return nil, syscall.ECONNRESET }

// status is an answer of the API server with code and a Status body.
func status(code int, reason, message string) func() (*http.Response, error) {
	return func() (*http.Response, error) {
		body := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"` + message + `","reason":"` + reason + `","code":` + strconv.Itoa(code) + `}`
		return &http.Response{
			StatusCode: code, Status: http.StatusText(code),
			Header: http.Header{"Content-Type": []string{"application/json"}},
			Body:   io.NopCloser(bytes.NewBufferString(body)),
		}, nil
	}
}

// TestApplyRetriesTransientFailures: a server-side apply that meets a reset
// connection, a 503, a 429 without Retry-After or an etcd leader change is
// sent again and lands; an answer about the object itself is not retried;
// a failure that lasts is returned once the backoff is spent.
func TestApplyRetriesTransientFailures(t *testing.T) {
	ns := env.Namespace(t)
	saved := kube.RetryBackoff
	kube.RetryBackoff = wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 4}
	t.Cleanup(func() { kube.RetryBackoff = saved })

	f := &faults{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(f.wrap)
	c, err := kube.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cm := func(name, value string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"data":     map[string]any{"k": value},
		}}
	}
	m, err := c.Mapping(cm("x", "").GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	apply := func(obj *unstructured.Unstructured, dryRun bool, next ...func() (*http.Response, error)) (int, error) {
		f.mu.Lock()
		f.next, f.patches = next, 0
		f.mu.Unlock()
		_, err := c.Apply(context.Background(), obj, m, kube.ApplyOptions{DryRun: dryRun})
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.patches, err
	}

	transient := []func() (*http.Response, error){
		reset,
		status(http.StatusServiceUnavailable, "ServiceUnavailable", "the server is currently unable to handle the request"),
		status(http.StatusTooManyRequests, "TooManyRequests", "the server has received too many requests and has asked us to try again later"),
	}
	if n, err := apply(cm("a", "1"), false, transient...); err != nil || n != 4 {
		t.Fatalf("apply after 3 transient failures: %d requests, %v; want 4 and success", n, err)
	}
	got, err := clientset(t).CoreV1().ConfigMaps(ns).Get(context.Background(), "a", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "1" {
		t.Fatalf("the retried apply did not land: %v %v", got, err)
	}
	leader := status(http.StatusInternalServerError, "InternalError", "Internal error occurred: etcdserver: leader changed")
	if n, err := apply(cm("a", "2"), true, leader); err != nil || n != 2 {
		t.Errorf("dry run after an etcd leader change: %d requests, %v; want 2 and success", n, err)
	}

	// Not transient: the server's answer about the object, sent once.
	bad := cm("b", "1")
	bad.Object["data"] = map[string]any{"k": map[string]any{"not": "a string"}}
	if n, err := apply(bad, false); err == nil || n != 1 {
		t.Errorf("invalid object: %d requests, %v; want 1 and an error", n, err)
	}
	other500 := status(http.StatusInternalServerError, "InternalError", "Internal error occurred: something else")
	if n, err := apply(cm("c", "1"), false, other500); err == nil || n != 1 {
		t.Errorf("a 500 that is not a leader change: %d requests, %v; want 1 and an error", n, err)
	}

	// A failure that lasts: RetryBackoff.Steps attempts, then its error.
	if n, err := apply(cm("d", "1"), false, reset, reset, reset, reset, reset); err == nil || n != 4 || !strings.Contains(err.Error(), "connection reset by peer") {
		t.Errorf("lasting reset: %d requests, %v; want 4 and the reset", n, err)
	}
}
