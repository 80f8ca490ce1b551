package secret

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func testSecret() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata": map[string]any{
			"name":      "db",
			"namespace": "prod",
			"labels":    map[string]any{"app": "db"},
			"annotations": map[string]any{
				LastAppliedAnnotation: `{"apiVersion":"v1","kind":"Secret","stringData":{"password":"hunter2"}}`,
				"team":                "payments",
			},
		},
		"type": "Opaque",
		"data": map[string]any{
			"password": b64("hunter2"),
			"broken":   "not base64!",
		},
		"stringData": map[string]any{
			"token": "s3cr3t-token",
		},
	}}
}

func TestRedact(t *testing.T) {
	r := NewRedactor([]byte("store key"))
	in := testSecret()
	orig := in.DeepCopy()
	got := r.Redact(in)

	want := testSecret()
	want.Object["data"] = map[string]any{
		"password": r.Digest([]byte("hunter2")),
		"broken":   r.Digest([]byte("not base64!")),
	}
	want.Object["stringData"] = map[string]any{"token": r.Digest([]byte("s3cr3t-token"))}
	want.Object["metadata"].(map[string]any)["annotations"] = map[string]any{
		LastAppliedAnnotation: r.Digest([]byte(`{"apiVersion":"v1","kind":"Secret","stringData":{"password":"hunter2"}}`)),
		"team":                "payments",
	}
	if diff := cmp.Diff(want.Object, got.Object); diff != "" {
		t.Errorf("Redact() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(orig.Object, in.Object); diff != "" {
		t.Errorf("Redact() changed its input (-want +got):\n%s", diff)
	}
	for _, v := range Values(in) {
		b, _ := got.MarshalJSON()
		if strings.Contains(string(b), v) {
			t.Errorf("redacted object still holds %q: %s", v, b)
		}
	}
}

func TestDigestFormat(t *testing.T) {
	d := NewRedactor([]byte("k")).Digest([]byte("hunter2"))
	if !IsRedacted(d) {
		t.Errorf("Digest() = %q, want <redacted sha256:<12 hex>>", d)
	}
	for _, s := range []string{"hunter2", "<redacted sha256:xyz>", "<redacted sha256:0123456789abc>", ""} {
		if IsRedacted(s) {
			t.Errorf("IsRedacted(%q) = true, want false", s)
		}
	}
}

func TestRedactStringDataMatchesData(t *testing.T) {
	r := NewRedactor([]byte("k"))
	desired := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"},
		"stringData": map[string]any{"password": "hunter2"},
	}}
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"},
		"data": map[string]any{"password": b64("hunter2")},
	}}
	d := r.Redact(desired).Object["stringData"].(map[string]any)["password"]
	l := r.Redact(live).Object["data"].(map[string]any)["password"]
	if d != l {
		t.Errorf("stringData digest %v != data digest %v for the same value", d, l)
	}
	other := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"},
		"data": map[string]any{"password": b64("hunter3")},
	}}
	if o := r.Redact(other).Object["data"].(map[string]any)["password"]; o == l {
		t.Errorf("different values give the same digest %v", o)
	}
}

func TestRedactKeyed(t *testing.T) {
	a := NewRedactor([]byte("key a")).Digest([]byte("hunter2"))
	b := NewRedactor([]byte("key b")).Digest([]byte("hunter2"))
	if a == b {
		t.Errorf("digests under different keys are equal: %s", a)
	}
}

func TestRedactIdempotent(t *testing.T) {
	r := NewRedactor([]byte("k"))
	once := r.Redact(testSecret())
	twice := r.Redact(once)
	if diff := cmp.Diff(once.Object, twice.Object); diff != "" {
		t.Errorf("redacting twice changed the object (-once +twice):\n%s", diff)
	}
}

func TestRedactNotSecret(t *testing.T) {
	r := NewRedactor([]byte("k"))
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"},
		"data": map[string]any{"password": "visible"},
	}}
	if got := r.Redact(cm); got != cm {
		t.Errorf("Redact(ConfigMap) returned a different object, want the same one")
	}
	if got := r.Redact(nil); got != nil {
		t.Errorf("Redact(nil) = %v, want nil", got)
	}
}

func TestRedactMalformed(t *testing.T) {
	r := NewRedactor([]byte("k"))
	in := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"},
		"data":       "aHVudGVyMg==",
		"stringData": map[string]any{"n": int64(1234567), "nil": nil},
	}}
	got := r.Redact(in)
	if d, _ := got.Object["data"].(string); !IsRedacted(d) {
		t.Errorf("malformed data = %#v, want a digest", got.Object["data"])
	}
	sd := got.Object["stringData"].(map[string]any)
	if d, _ := sd["n"].(string); !IsRedacted(d) {
		t.Errorf("numeric stringData value = %#v, want a digest", sd["n"])
	}
	if sd["nil"] != nil {
		t.Errorf("null stringData value = %#v, want null", sd["nil"])
	}
}
