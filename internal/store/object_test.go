package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestObjectRoundTrip(t *testing.T) {
	db := openTest(t)
	odd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "n", "resourceVersion": "7"},
		"spec": map[string]any{
			"float": 0.1, "integral": float64(3), "big": 1e21, "neg": int64(-5), "int": 7,
			"html": "<a href=\"x\">&</a>", "invalid": "a\xffb", "unicode": "grüße \u2028",
			"null": nil, "empty": map[string]any{}, "list": []any{}, "nested": []any{[]any{true, false}},
		},
	}}
	objs := append(newApp(30).objs, odd)
	m := put(t, db, Before, objs)
	db = reopen(t, db, DefaultOptions())
	s, err := db.Snapshot(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Entries {
		got, err := db.Object(e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if id := ObjectID(db.Redactor(), got); id != e.ID {
			t.Errorf("%s: stored object hashes to %s, want %s", e.Ref, id, e.ID)
		}
	}
	id := ObjectID(db.Redactor(), odd)
	got, err := db.Object(id)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"float": 0.1, "integral": int64(3), "big": 1e21, "neg": int64(-5), "int": int64(7),
		"html": "<a href=\"x\">&</a>", "invalid": "a\uFFFDb", "unicode": "grüße \u2028",
		"null": nil, "empty": map[string]any{}, "list": []any{}, "nested": []any{[]any{true, false}},
	}
	if diff := cmp.Diff(want, got.Object["spec"]); diff != "" {
		t.Errorf("stored spec (-want +got):\n%s", diff)
	}
}

func TestObjectNotFound(t *testing.T) {
	db := openTest(t)
	id := Hash("nothing")
	_, err := db.Object(id)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Object() error = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), id.String()) {
		t.Errorf("error %q does not name the ID", err)
	}
	assertOneLine(t, err, db.Path())
}
