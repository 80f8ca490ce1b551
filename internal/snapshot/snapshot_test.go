package snapshot_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/snapshot"
	"github.com/snapply/snapply/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func setup(t *testing.T) (*kubernetes.Clientset, string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	ctx := context.Background()
	for i := range 3 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other"}, StringData: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return cs, ns
}

func names(res *snapshot.Result) []string {
	var out []string
	for _, o := range res.Objects {
		if o.GetKind() == "ServiceAccount" || o.GetKind() == "ConfigMap" && o.GetName() == "kube-root-ca.crt" {
			continue // created by the control plane in every namespace
		}
		out = append(out, object.RefOf(o).String())
	}
	return out
}

func TestScopes(t *testing.T) {
	_, ns := setup(t)
	c, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	refs := []object.Ref{
		{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "cm-0"},
		{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "not-there-yet"},
		{Version: "v1", Kind: "Namespace", Name: ns},
	}
	ctx := context.Background()

	opts := snapshot.DefaultOptions()
	opts.Scope = snapshot.ScopeManaged
	res, err := snapshot.Capture(ctx, c, refs, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"namespace/" + ns, "configmap/cm-0 -n " + ns}
	if got := names(res); !slices.Equal(got, want) {
		t.Errorf("managed scope = %v, want %v", got, want)
	}

	opts.Scope = snapshot.ScopeNamespaces
	opts.PageSize = 2 // force pagination
	res, err = snapshot.Capture(ctx, c, refs, opts)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"namespace/" + ns, "configmap/cm-0 -n " + ns, "configmap/cm-1 -n " + ns, "configmap/cm-2 -n " + ns, "secret/other -n " + ns}
	if got := names(res); !slices.Equal(got, want) {
		t.Errorf("namespaces scope = %v, want %v", got, want)
	}
	for _, o := range res.Objects {
		if o.GetResourceVersion() == "" || o.GetAPIVersion() == "" || o.GetKind() == "" {
			t.Errorf("%s: captured without resourceVersion or type", o.GetName())
		}
		if o.GetKind() == "Event" || o.GetKind() == "Lease" {
			t.Errorf("high-churn %s captured", o.GetKind())
		}
	}
	if len(res.Skipped) != 0 {
		t.Errorf("admin skipped %v", res.Skipped)
	}

	opts.Scope = snapshot.ScopeCluster
	res, err = snapshot.Capture(ctx, c, refs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Objects, func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "Namespace" && o.GetName() == "kube-system"
	}) {
		t.Error("cluster scope misses namespace/kube-system")
	}
}

func TestForbiddenTypesAreSkipped(t *testing.T) {
	cs, ns := setup(t)
	ctx := context.Background()
	// A user who may list everything but Secrets.
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-no-secrets"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps", "namespaces", "services", "pods", "serviceaccounts"}, Verbs: []string{"get", "list"}},
		},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-no-secrets"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "limited"}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})
		_ = cs.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{})
	})

	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "limited"}
	c, err := kube.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := snapshot.Capture(ctx, c, []object.Ref{{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "cm-0"}}, snapshot.DefaultOptions())
	if err != nil {
		t.Fatalf("a type the identity may not list must be skipped, not fatal: %v", err)
	}
	if !slices.ContainsFunc(res.Skipped, func(s snapshot.Skipped) bool { return s.Resource == "secrets/v1" && s.Reason == "forbidden" }) {
		t.Errorf("skipped = %v, want secrets/v1 forbidden", res.Skipped)
	}
	if got := names(res); !slices.Contains(got, "configmap/cm-2 -n "+ns) || slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "secret/") }) {
		t.Errorf("objects = %v", got)
	}
}

func TestUnreachable(t *testing.T) {
	cfg := rest.CopyConfig(env.Config)
	cfg.Host = "https://127.0.0.1:1"
	c, err := kube.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot reach the API server at https://127.0.0.1:1") {
		t.Fatalf("err = %v", err)
	}
}

// TestTransientListFailuresAreRetried: a LIST page that meets a 503 (an
// API server briefly overloaded, or restarting behind its load balancer)
// is asked for again, and the snapshot is complete.
func TestTransientListFailuresAreRetried(t *testing.T) {
	_, ns := setup(t)
	saved := kube.RetryBackoff
	kube.RetryBackoff.Duration = time.Millisecond
	t.Cleanup(func() { kube.RetryBackoff = saved })
	var mu sync.Mutex
	failed := 0
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			fail := req.Method == http.MethodGet && req.URL.Path == "/api/v1/namespaces/"+ns+"/configmaps" && failed < 2
			if fail {
				failed++
			}
			mu.Unlock()
			if !fail {
				return rt.RoundTrip(req)
			}
			return &http.Response{
				StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable",
				Header: http.Header{"Content-Type": []string{"application/json"}},
				Body:   io.NopCloser(strings.NewReader(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the server is currently unable to handle the request","reason":"ServiceUnavailable","code":503}`)),
			}, nil
		})
	})
	c, err := kube.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := snapshot.DefaultOptions()
	opts.PageSize = 2
	res, err := snapshot.Capture(context.Background(), c, []object.Ref{{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "cm-0"}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"configmap/cm-0 -n " + ns, "configmap/cm-1 -n " + ns, "configmap/cm-2 -n " + ns, "secret/other -n " + ns}
	if got := names(res); !slices.Equal(got, want) || failed != 2 {
		t.Errorf("after %d failed LISTs: %v, want %v", failed, got, want)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
