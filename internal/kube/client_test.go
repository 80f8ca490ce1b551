package kube

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

func TestServerHash(t *testing.T) {
	hash := func(host string) string { return (&Client{Config: &rest.Config{Host: host}}).ServerHash() }
	h := hash("https://10.0.0.1:6443")
	if len(h) != 16 || strings.Trim(h, "0123456789abcdef") != "" || strings.Contains(h, "10.0.0.1") {
		t.Errorf("ServerHash() = %q, want 16 hex characters", h)
	}
	if h != hash("https://10.0.0.1:6443") {
		t.Error("one server hashes two ways")
	}
	if h == hash("https://10.0.0.2:6443") {
		t.Error("two servers hash alike")
	}
}
