package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
)

// Bodies that kube-apiserver 1.36 answered to `kubectl apply --server-side`
// (recorded with -v=8), so that these tests see the errors as client-go
// decodes them from the wire.
const (
	// Two field managers that applied (operation Apply: no "using").
	bodyConflictsApply = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Apply failed with 3 conflicts: conflicts with \"m1\":\n- .data.a\n- .data.b\nconflicts with \"m3\":\n- .data.c","reason":"Conflict","details":{"causes":[{"reason":"FieldManagerConflict","message":"conflict with \"m1\"","field":".data.a"},{"reason":"FieldManagerConflict","message":"conflict with \"m1\"","field":".data.b"},{"reason":"FieldManagerConflict","message":"conflict with \"m3\"","field":".data.c"}]},"code":409}`
	// `kubectl create deployment` then `kubectl scale`: managers that
	// updated, one through the scale subresource.
	bodyConflictsUpdate = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Apply failed with 2 conflicts: conflicts with \"kubectl\" with subresource \"scale\" using apps/v1:\n- .spec.replicas\nconflicts with \"kubectl-create\" using apps/v1:\n- .spec.template.spec.containers[name=\"nginx\"].image","reason":"Conflict","details":{"causes":[{"reason":"FieldManagerConflict","message":"conflict with \"kubectl-create\" using apps/v1","field":".spec.template.spec.containers[name=\"nginx\"].image"},{"reason":"FieldManagerConflict","message":"conflict with \"kubectl\" with subresource \"scale\" using apps/v1","field":".spec.replicas"}]},"code":409}`
	// A replace with a stale resourceVersion: a 409 that is no field conflict.
	bodyOptimisticLock = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on configmaps \"probe\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"probe","kind":"configmaps"},"code":409}`
	bodyInvalid        = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Deployment.apps \"probe\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0","reason":"Invalid","details":{"name":"probe","group":"apps","kind":"Deployment","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: -1: must be greater than or equal to 0","field":"spec.replicas"}]},"code":422}`
	bodyNoNamespace    = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \"missing-ns\" not found","reason":"NotFound","details":{"name":"missing-ns","kind":"namespaces"},"code":404}`
	// A string for an integer, and an unknown field: both a 500 without a
	// reason.
	bodyTypedPatch   = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"failed to create typed patch object (default/probe; /v1, Kind=ConfigMap): .data.a: expected string, got \u0026value.valueUnstructured{Value:1}","code":500}`
	bodyUnknownField = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"failed to create typed patch object (default/probe; /v1, Kind=ConfigMap): .datax: field not declared in schema","code":500}`
)

var configMaps = &meta.RESTMapping{
	Resource:         schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
	GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
	Scope:            meta.RESTScopeNamespace,
}

func probe() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "probe", "namespace": "default"},
		"data":       map[string]any{"a": "1"},
	}}
}

// applyTo server-side applies a ConfigMap with Client.Apply to the server
// at host and returns the error.
func applyTo(t *testing.T, cfg *rest.Config) error {
	t.Helper()
	c, err := NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), DefaultOptions().Timeout)
	defer cancel()
	_, err = c.Apply(ctx, probe(), configMaps, ApplyOptions{})
	if err == nil {
		t.Fatal("Apply succeeded, want an error")
	}
	return err
}

// answer returns the error Client.Apply returns when the API server
// answers code and body.
func answer(t *testing.T, code int, body string) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return applyTo(t, &rest.Config{Host: srv.URL})
}

// refused returns the error Client.Apply returns when nothing listens.
func refused(t *testing.T) error {
	t.Helper()
	return applyTo(t, &rest.Config{Host: "http://127.0.0.1:1"})
}

func TestConflicts(t *testing.T) {
	tests := []struct {
		name string
		err  func(t *testing.T) error
		want []Conflict
	}{
		{
			name: "several fields of two managers that applied",
			err:  func(t *testing.T) error { return answer(t, 409, bodyConflictsApply) },
			want: []Conflict{{".data.a", "m1"}, {".data.b", "m1"}, {".data.c", "m3"}},
		},
		{
			name: "managers that updated, one through a subresource",
			err:  func(t *testing.T) error { return answer(t, 409, bodyConflictsUpdate) },
			want: []Conflict{
				{`.spec.template.spec.containers[name="nginx"].image`, "kubectl-create"},
				{".spec.replicas", "kubectl"},
			},
		},
		{
			name: "one field, built as the server builds it",
			err: func(*testing.T) error {
				return apierrors.NewApplyConflict([]metav1.StatusCause{{
					Type:    metav1.CauseTypeFieldManagerConflict,
					Message: `conflict with "kubectl-edit" using apps/v1 at 2026-01-02T03:04:05Z`,
					Field:   ".spec.replicas",
				}}, `Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1 at 2026-01-02T03:04:05Z: .spec.replicas`)
			},
			want: []Conflict{{".spec.replicas", "kubectl-edit"}},
		},
		{
			name: "wrapped",
			err: func(t *testing.T) error {
				return fmt.Errorf("apply configmap/probe -n default: %w", answer(t, 409, bodyConflictsApply))
			},
			want: []Conflict{{".data.a", "m1"}, {".data.b", "m1"}, {".data.c", "m3"}},
		},
		{
			name: "a cause whose manager cannot be read keeps its field",
			err: func(*testing.T) error {
				return apierrors.NewApplyConflict([]metav1.StatusCause{
					{Type: metav1.CauseTypeFieldManagerConflict, Message: "something else", Field: ".data.a"},
					{Type: metav1.CauseTypeFieldValueInvalid, Message: "not a conflict", Field: ".data.b"},
				}, "Apply failed with 1 conflict")
			},
			want: []Conflict{{".data.a", ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Conflicts(tt.err(t))
			if !ok {
				t.Fatal("Conflicts: not a conflict, want one")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Conflicts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConflictsOnlyForFieldConflicts(t *testing.T) {
	tests := []struct {
		name string
		err  func(t *testing.T) error
	}{
		{"optimistic-lock 409", func(t *testing.T) error { return answer(t, 409, bodyOptimisticLock) }},
		{"optimistic-lock 409 built", func(*testing.T) error {
			return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "probe", errors.New("the object has been modified"))
		}},
		{"already exists", func(*testing.T) error {
			return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, "probe")
		}},
		{"invalid", func(t *testing.T) error { return answer(t, 422, bodyInvalid) }},
		{"unreachable", refused},
		{"nil", func(*testing.T) error { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := Conflicts(tt.err(t)); ok || got != nil {
				t.Errorf("Conflicts = %v, %v; want nil, false", got, ok)
			}
		})
	}
}

func TestIsInvalid(t *testing.T) {
	tests := []struct {
		name string
		err  func(t *testing.T) error
		want bool
	}{
		{"422 schema error", func(t *testing.T) error { return answer(t, 422, bodyInvalid) }, true},
		{"422 built", func(*testing.T) error {
			return apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "probe",
				field.ErrorList{field.Invalid(field.NewPath("data").Key("a b"), "a b", "a valid config key must consist of alphanumeric characters")})
		}, true},
		{"400 bad request", func(*testing.T) error {
			return apierrors.NewBadRequest(`error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors: mapping key "a" already defined`)
		}, true},
		{"404 missing namespace", func(t *testing.T) error { return answer(t, 404, bodyNoNamespace) }, true},
		{"404 unknown resource type", func(*testing.T) error {
			return apierrors.NewNotFound(schema.GroupResource{Group: "example.com", Resource: "widgets"}, "")
		}, true},
		{"500 typed patch: a string for an integer", func(t *testing.T) error { return answer(t, 500, bodyTypedPatch) }, true},
		{"500 typed patch: unknown field", func(t *testing.T) error { return answer(t, 500, bodyUnknownField) }, true},
		{"500 typed patch wrapped", func(t *testing.T) error {
			return fmt.Errorf("apply: %w", answer(t, 500, bodyTypedPatch))
		}, true},

		{"500 another internal error", func(*testing.T) error {
			return apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
		}, false},
		{"typed patch words in a transport error", func(*testing.T) error {
			return errors.New("failed to create typed patch object (default/probe; /v1, Kind=ConfigMap): x")
		}, false},
		{"409 field conflict", func(t *testing.T) error { return answer(t, 409, bodyConflictsApply) }, false},
		{"403 forbidden", func(*testing.T) error {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "probe", errors.New(`User "ci" cannot patch resource "configmaps" in API group "" in the namespace "default"`))
		}, false},
		{"503 unavailable", func(*testing.T) error { return apierrors.NewServiceUnavailable("etcd is down") }, false},
		{"unreachable", refused, false},
		{"nil", func(*testing.T) error { return nil }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsInvalid(tt.err(t)); got != tt.want {
				t.Errorf("IsInvalid = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	tests := []struct {
		name string
		err  func(t *testing.T) error
		want string
	}{
		{
			name: "invalid: the kind and name are not repeated",
			err:  func(t *testing.T) error { return answer(t, 422, bodyInvalid) },
			want: "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
		},
		{
			name: "invalid custom resource",
			err: func(*testing.T) error {
				return apierrors.NewInvalid(schema.GroupKind{Group: "example.com", Kind: "Widget"}, "w1",
					field.ErrorList{field.Invalid(field.NewPath("spec", "size"), 30, "spec.size in body should be less than or equal to 10")})
			},
			want: "spec.size: Invalid value: 30: spec.size in body should be less than or equal to 10",
		},
		{
			name: "invalid, several fields",
			err: func(*testing.T) error {
				return apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "probe", field.ErrorList{
					field.Invalid(field.NewPath("data").Key("a b"), "a b", "a valid config key must consist of alphanumeric characters"),
					field.Required(field.NewPath("metadata", "name"), ""),
				})
			},
			want: `[data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, metadata.name: Required value]`,
		},
		{
			name: "invalid, wrapped",
			err: func(t *testing.T) error {
				return fmt.Errorf("apply deployment.apps/probe: %w", answer(t, 422, bodyInvalid))
			},
			want: "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
		},
		{
			name: "typed patch: a string for an integer",
			err:  func(t *testing.T) error { return answer(t, 500, bodyTypedPatch) },
			want: ".data.a: expected string, got &value.valueUnstructured{Value:1}",
		},
		{
			name: "typed patch: unknown field",
			err:  func(t *testing.T) error { return answer(t, 500, bodyUnknownField) },
			want: ".datax: field not declared in schema",
		},
		{
			name: "several lines on one",
			err:  func(t *testing.T) error { return answer(t, 409, bodyConflictsApply) },
			want: `Apply failed with 3 conflicts: conflicts with "m1": - .data.a - .data.b conflicts with "m3": - .data.c`,
		},
		{
			name: "not found as is",
			err:  func(t *testing.T) error { return answer(t, 404, bodyNoNamespace) },
			want: `namespaces "missing-ns" not found`,
		},
		{
			name: "an \"is invalid\" deep in a sentence is kept",
			err: func(*testing.T) error {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "probe",
					errors.New(`admission webhook "check.example.com" denied the request: the image tag is invalid: latest`))
			},
			want: `configmaps "probe" is forbidden: admission webhook "check.example.com" denied the request: the image tag is invalid: latest`,
		},
		{
			name: "transport error",
			err:  refused,
			want: "cannot reach the API server at http://127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused",
		},
		{
			name: "plain error on one line",
			err:  func(*testing.T) error { return errors.New("encode:\n\tbad  value") },
			want: "encode: bad value",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Message(tt.err(t)); got != tt.want {
				t.Errorf("Message =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

func TestUnreachableConnectionRefused(t *testing.T) {
	err := refused(t) // Client.Apply wraps with Unreachable
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("Apply to a closed port: %T %v, want an *UnreachableError", err, err)
	}
	if ue.Server != "http://127.0.0.1:1" {
		t.Errorf("Server = %q, want http://127.0.0.1:1", ue.Server)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("errors.Is(%v, ECONNREFUSED) = false, want the cause kept", err)
	}
	// The server is named once, not again in client-go's `Patch "URL":`.
	if got := strings.Count(err.Error(), "127.0.0.1:1"); got != 2 || strings.Contains(err.Error(), "Patch") {
		t.Errorf("error %q: want the server named once and then the dial error, without the request", err)
	}
	wrapped := fmt.Errorf("lock default/snapply: %w", err)
	if !errors.As(wrapped, &ue) || !IsTransport(wrapped) {
		t.Errorf("wrapped %v: not an *UnreachableError or not a transport error", wrapped)
	}
}

func TestUnreachableUntrustedCertificate(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the request reached the handler, want a TLS failure")
	}))
	defer srv.Close()
	err := applyTo(t, &rest.Config{Host: srv.URL}) // no CA: the certificate is not trusted
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("Apply to an untrusted server: %T %v, want an *UnreachableError", err, err)
	}
	if !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("error %q: want the TLS cause", err)
	}
}

func TestUnreachableKeepsAnswers(t *testing.T) {
	tests := []struct {
		name string
		err  func(t *testing.T) error
	}{
		{"409", func(t *testing.T) error { return answer(t, 409, bodyConflictsApply) }},
		{"422", func(t *testing.T) error { return answer(t, 422, bodyInvalid) }},
		{"404", func(t *testing.T) error { return answer(t, 404, bodyNoNamespace) }},
		{"500", func(t *testing.T) error { return answer(t, 500, bodyTypedPatch) }},
		{"503", func(t *testing.T) error {
			return answer(t, 503, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server is currently unable to handle the request","reason":"ServiceUnavailable","code":503}`)
		}},
		{"wrapped answer", func(t *testing.T) error {
			return fmt.Errorf("list configmaps: %w", answer(t, 422, bodyInvalid))
		}},
		{"no answer, no transport", func(*testing.T) error { return errors.New("encode: json: unsupported value: NaN") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err(t)
			var ue *UnreachableError
			if errors.As(err, &ue) {
				t.Fatalf("Client.Apply returned %v, an *UnreachableError for an answer", err)
			}
			if IsTransport(err) {
				t.Errorf("IsTransport(%v) = true, want false", err)
			}
			if got := Unreachable("https://api.example.com", err); got != err {
				t.Errorf("Unreachable(%v) = %v, want the error as it is", err, got)
			}
		})
	}
	if got := Unreachable("https://api.example.com", nil); got != nil {
		t.Errorf("Unreachable(nil) = %v, want nil", got)
	}
}
