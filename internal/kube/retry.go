package kube

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// RetryBackoff paces the attempts of one request after transient failures
// (Retry): 4 attempts, 0.25 s, 0.5 s and 1 s apart (with 20% jitter).
// client-go itself only retries reads that meet a reset connection, and
// answers that carry Retry-After.
var RetryBackoff = wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 4}

// Transient reports whether err is a failure after which the same
// server-side apply, or the same read, may simply be sent again: the connection was reset or
// closed mid-request (a load balancer, an API server restarting during a
// control-plane upgrade), or the server answered 429 or 503, or a 500 from
// an etcd leader change. Server-side apply is idempotent, so a retry after
// a request that did reach the server gives the same result.
//
// A request that ran out of its --request-timeout, a cancelled run, a
// server that refuses connections and every answer about the object
// itself are not transient.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		switch {
		case apierrors.IsTooManyRequests(err), apierrors.IsServiceUnavailable(err):
			return true
		case status.Status().Code == 500:
			msg := status.Status().Message
			return strings.Contains(msg, "etcdserver: leader changed") || strings.Contains(msg, "etcdserver: request timed out")
		}
		return false
	}
	return utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "http2: client connection lost") || strings.Contains(err.Error(), "http2: server sent GOAWAY")
}

// Retry calls f, a request that is safe to send again (a read, a
// server-side apply), until it succeeds, fails for good (not Transient) or
// RetryBackoff is spent, waiting between attempts unless ctx ends. It
// returns the number of attempts and f's last error.
func Retry(ctx context.Context, f func() error) (int, error) {
	b := RetryBackoff
	for attempt := 1; ; attempt++ {
		err := f()
		if err == nil || !Transient(err) || b.Steps <= 1 {
			return attempt, err
		}
		t := time.NewTimer(b.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return attempt, err
		case <-t.C:
		}
	}
}
