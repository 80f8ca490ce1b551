// Package kube holds snapply's connection to a Kubernetes API server: the
// REST config built from kubectl-style flags, the dynamic client, a
// RESTMapper that refreshes when a kind is missing, server-side apply (real
// and dry-run) with per-request warnings, and typed errors that reports can
// explain (conflicts with their field managers, unreachable servers).
//
// Client-side rate limiting is effectively off (high QPS and burst): the API
// server's priority and fairness protects it, and a client-side limiter must
// not be what bounds a plan or an apply of thousands of objects.
package kube
