package secret

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestIsSecret(t *testing.T) {
	tests := []struct {
		name string
		obj  map[string]any
		want bool
	}{
		{"v1 Secret", map[string]any{"apiVersion": "v1", "kind": "Secret"}, true},
		{"Secret without apiVersion", map[string]any{"kind": "Secret"}, true},
		{"ConfigMap", map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}, false},
		{"Secret of another group", map[string]any{"apiVersion": "example.com/v1", "kind": "Secret"}, false},
		{"SealedSecret", map[string]any{"apiVersion": "bitnami.com/v1alpha1", "kind": "SealedSecret"}, false},
		{"lower-case kind", map[string]any{"apiVersion": "v1", "kind": "secret"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsSecret(&unstructured.Unstructured{Object: tt.obj}); got != tt.want {
				t.Errorf("IsSecret() = %v, want %v", got, tt.want)
			}
		})
	}
	if IsSecret(nil) {
		t.Error("IsSecret(nil) = true, want false")
	}
}
