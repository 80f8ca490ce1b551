package secret

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestValues(t *testing.T) {
	tests := []struct {
		name string
		obj  map[string]any
		want []string
	}{
		{
			name: "data, stringData and last-applied",
			obj:  testSecret().Object,
			want: []string{
				b64("hunter2"),
				b64("s3cr3t-token"),
				"hunter2",
				"not base64!",
				"s3cr3t-token",
				`{"apiVersion":"v1","kind":"Secret","stringData":{"password":"hunter2"}}`,
			},
		},
		{
			name: "duplicates, empty values and digests left out",
			obj: map[string]any{
				"apiVersion": "v1", "kind": "Secret",
				"data":       map[string]any{"a": b64("x"), "b": b64("x"), "empty": "", "red": "<redacted sha256:0123456789ab>"},
				"stringData": map[string]any{"c": "x"},
			},
			want: []string{b64("x"), "x"},
		},
		{
			name: "not a Secret",
			obj:  map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"a": "b"}},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Values(&unstructured.Unstructured{Object: tt.obj})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Values() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
