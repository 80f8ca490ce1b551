package store

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/secret"
)

func TestNormalize(t *testing.T) {
	r := secret.NewRedactor([]byte("k"))
	managed := []any{map[string]any{"manager": "snapply", "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{}}}}
	tests := []struct {
		name   string
		in     map[string]any
		want   map[string]any
		wantRV string
	}{
		{
			name: "resourceVersion dropped, managedFields and status kept",
			in: map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "resourceVersion": "4711", "generation": int64(3), "managedFields": managed},
				"status":   map[string]any{"readyReplicas": int64(2)},
			},
			want: map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "generation": int64(3), "managedFields": managed},
				"status":   map[string]any{"readyReplicas": int64(2)},
			},
			wantRV: "4711",
		},
		{
			name: "Secret redacted",
			in: map[string]any{
				"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "resourceVersion": "1"},
				"data": map[string]any{"p": "aHVudGVyMg=="},
			},
			want: map[string]any{
				"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"},
				"data": map[string]any{"p": r.Digest([]byte("hunter2"))},
			},
			wantRV: "1",
		},
		{
			name: "values brought to JSON types",
			in: map[string]any{
				"kind": "K", "metadata": map[string]any{"name": "x"},
				"n": 3, "u": uint8(4), "f": float32(0.5), "num": json.Number("7"), "l": []string{"a"},
				"bad": "a\xffb",
			},
			want: map[string]any{
				"kind": "K", "metadata": map[string]any{"name": "x"},
				"n": int64(3), "u": int64(4), "f": 0.5, "num": int64(7), "l": []any{"a"},
				"bad": "a\uFFFDb",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &unstructured.Unstructured{Object: tt.in}
			before, _ := json.Marshal(tt.in)
			got, rv := Normalize(r, in)
			if diff := cmp.Diff(tt.want, got.Object); diff != "" {
				t.Errorf("Normalize() mismatch (-want +got):\n%s", diff)
			}
			if rv != tt.wantRV {
				t.Errorf("resourceVersion = %q, want %q", rv, tt.wantRV)
			}
			if after, _ := json.Marshal(tt.in); string(after) != string(before) {
				t.Errorf("Normalize changed its input:\n%s\n%s", before, after)
			}
		})
	}
}
