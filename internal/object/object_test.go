package object

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRefString(t *testing.T) {
	tests := []struct {
		name string
		ref  Ref
		want string
	}{
		{
			name: "core namespaced",
			ref:  Ref{Version: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "settings"},
			want: "configmap/settings -n prod",
		},
		{
			name: "grouped namespaced",
			ref:  Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "web"},
			want: "deployment.apps/web -n prod",
		},
		{
			name: "core cluster-scoped",
			ref:  Ref{Version: "v1", Kind: "Namespace", Name: "prod"},
			want: "namespace/prod",
		},
		{
			name: "grouped cluster-scoped, group with dots",
			ref:  Ref{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "admin"},
			want: "clusterrole.rbac.authorization.k8s.io/admin",
		},
		{
			name: "custom resource: camel-case kind lowered whole",
			ref:  Ref{Group: "cert-manager.io", Version: "v1", Kind: "CertificateRequest", Namespace: "prod", Name: "web-tls-1"},
			want: "certificaterequest.cert-manager.io/web-tls-1 -n prod",
		},
		{
			name: "the version is not shown",
			ref:  Ref{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler", Namespace: "prod", Name: "web"},
			want: "horizontalpodautoscaler.autoscaling/web -n prod",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ref.String(); got != tt.want {
				t.Errorf("Ref.String() = %q, want %q", got, tt.want)
			}
			if got := tt.ref.Key().String(); got != tt.want {
				t.Errorf("Key.String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCompareOrdersByNamespaceGroupKindName(t *testing.T) {
	// The order listings show: cluster-scoped objects first, then each
	// namespace's objects together, by group (core first), kind and name.
	want := []Ref{
		{Version: "v1", Kind: "Namespace", Name: "dev"},
		{Version: "v1", Kind: "Namespace", Name: "prod"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "admin"},
		{Version: "v1", Kind: "ConfigMap", Namespace: "dev", Name: "z"},
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "dev", Name: "a"},
		{Version: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "a"},
		{Version: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "b"},
		{Version: "v1", Kind: "Service", Namespace: "prod", Name: "a"},
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "a"},
		{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "prod", Name: "a"},
		{Group: "batch", Version: "v1", Kind: "Job", Namespace: "prod", Name: "a"},
	}
	// Every rotation and the reverse of the wanted order sort back to it.
	for i := range want {
		got := append(slices.Clone(want[i:]), want[:i]...)
		slices.Reverse(got)
		slices.SortFunc(got, Compare)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("sorted with Compare from rotation %d (-want +got):\n%s", i, diff)
		}
	}
	for i := range want {
		for j := range want {
			got, wantSign := Compare(want[i], want[j]), cmpInt(i, j)
			if sign(got) != wantSign {
				t.Errorf("Compare(%v, %v) = %d, want sign %d", want[i], want[j], got, wantSign)
			}
		}
	}
}

func TestCompareIgnoresVersion(t *testing.T) {
	a := Ref{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler", Namespace: "prod", Name: "web"}
	b := a
	b.Version = "v2"
	if got := Compare(a, b); got != 0 {
		t.Errorf("Compare of the same object read as v1 and v2 = %d, want 0", got)
	}
	if a.Key() != b.Key() {
		t.Errorf("Key of the same object read as v1 and v2 differ: %v, %v", a.Key(), b.Key())
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sign(n int) int { return cmpInt(n, 0) }

func TestParseSelector(t *testing.T) {
	tests := []struct {
		in   string
		want Selector
	}{
		// kubectl style, group after the first dot.
		{"deployment.apps/web -n prod", Selector{Group: "apps", Kind: "deployment", Namespace: "prod", Name: "web"}},
		{"deployment.apps/web --namespace prod", Selector{Group: "apps", Kind: "deployment", Namespace: "prod", Name: "web"}},
		{"clusterrole.rbac.authorization.k8s.io/admin", Selector{Group: "rbac.authorization.k8s.io", Kind: "clusterrole", Name: "admin"}},
		{"  configmap/settings \t -n   prod  ", Selector{AnyGroup: true, Kind: "configmap", Namespace: "prod", Name: "settings"}},
		// Kind without group: any group.
		{"deployment/web -n prod", Selector{AnyGroup: true, Kind: "deployment", Namespace: "prod", Name: "web"}},
		// Kind/namespace/name.
		{"Deployment/prod/web", Selector{AnyGroup: true, Kind: "Deployment", Namespace: "prod", Name: "web"}},
		{"Deployment.apps/prod/web", Selector{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"}},
		// Kind/name, cluster-scoped.
		{"Namespace/prod", Selector{AnyGroup: true, Kind: "Namespace", Name: "prod"}},
		// group/version/Kind/namespace/name.
		{"apps/v1/Deployment/prod/web", Selector{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"}},
		// version/Kind/namespace/name: the core group, and only it.
		{"v1/ConfigMap/prod/settings", Selector{Kind: "ConfigMap", Namespace: "prod", Name: "settings"}},
		// group/version/Kind/name: cluster-scoped (a group with a dot), or
		// namespaced with -n.
		{"rbac.authorization.k8s.io/v1/ClusterRole/admin", Selector{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"}},
		{"apps/v1/Deployment/web -n prod", Selector{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"}},
		// A group without a dot is still a group when a version follows.
		{"apps/v1/Deployment/web", Selector{Group: "apps", Kind: "Deployment", Name: "web"}},
		// version/Kind/name: core, cluster-scoped.
		{"v1/Namespace/prod", Selector{Kind: "Namespace", Name: "prod"}},
		{"v1/ConfigMap/settings -n prod", Selector{Kind: "ConfigMap", Namespace: "prod", Name: "settings"}},
		{"batch/v1beta1/CronJob/prod/nightly", Selector{Group: "batch", Kind: "CronJob", Namespace: "prod", Name: "nightly"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSelector(tt.in)
			if err != nil {
				t.Fatalf("ParseSelector(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseSelector(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseSelectorErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{"", "empty object reference"},
		{" \t ", "empty object reference"},
		{"web", `object reference "web": want KIND[.GROUP]/NAME [-n NAMESPACE] or Kind/namespace/name`},
		{"deployment.apps/web -n", `object reference "deployment.apps/web -n": want`},
		{"deployment.apps/web prod", `object reference "deployment.apps/web prod": want`},
		{"deployment.apps/web -x prod", `object reference "deployment.apps/web -x prod": want`},
		{"-n prod deployment.apps/web", `object reference "-n prod deployment.apps/web": want`},
		{"deployment.apps/web -n prod extra", `object reference "deployment.apps/web -n prod extra": want`},
		{"deployment//web", `object reference "deployment//web": empty part`},
		{"/web", `object reference "/web": empty part`},
		{"deployment/", `object reference "deployment/": empty part`},
		{"Deployment/prod/web -n dev", `object reference "Deployment/prod/web -n dev": namespace given twice`},
		{"a/b/c/d/e/f", `object reference "a/b/c/d/e/f": want`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSelector(tt.in)
			if err == nil {
				t.Fatalf("ParseSelector(%q) = %+v, want an error", tt.in, got)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSelector(%q) error %q, want it to contain %q", tt.in, err, tt.wantErr)
			}
		})
	}
}

func TestSelectorMatches(t *testing.T) {
	deploy := Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "web"}
	crdDeploy := Ref{Group: "example.com", Version: "v1alpha1", Kind: "Deployment", Namespace: "prod", Name: "web"}
	cm := Ref{Version: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "settings"}
	exampleCM := Ref{Group: "example.com", Version: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "settings"}
	ns := Ref{Version: "v1", Kind: "Namespace", Name: "prod"}
	role := Ref{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "admin"}
	with := func(r Ref, f func(*Ref)) Ref { f(&r); return r }

	tests := []struct {
		sel  string
		ref  Ref
		want bool
	}{
		{"deployment.apps/web -n prod", deploy, true},
		{"DEPLOYMENT.apps/web -n prod", deploy, true},
		{"Deployment/prod/web", deploy, true},
		{"apps/v1/Deployment/prod/web", deploy, true},
		{"apps/v1/Deployment/prod/web", with(deploy, func(r *Ref) { r.Version = "v1beta2" }), true},
		{"deployment/web -n prod", deploy, true},
		// Without a group, any group; with one, only that group.
		{"deployment/web -n prod", crdDeploy, true},
		{"deployment.apps/web -n prod", crdDeploy, false},
		{"deployment.extensions/web -n prod", deploy, false},
		{"deployment.apps/web -n dev", deploy, false},
		{"deployment.apps/web", deploy, false},
		{"deployment.apps/api -n prod", deploy, false},
		{"deployment.apps/WEB -n prod", deploy, false},
		{"statefulset.apps/web -n prod", deploy, false},
		// version/Kind/namespace/name names the core group only.
		{"v1/ConfigMap/prod/settings", cm, true},
		{"v1/ConfigMap/prod/settings", exampleCM, false},
		{"configmap/settings -n prod", exampleCM, true},
		// Cluster-scoped.
		{"Namespace/prod", ns, true},
		{"namespace/prod -n prod", ns, false},
		{"Namespace/dev", ns, false},
		{"clusterrole.rbac.authorization.k8s.io/admin", role, true},
		{"rbac.authorization.k8s.io/v1/ClusterRole/admin", role, true},
		{"clusterrole/admin", role, true},
		{"clusterrole.rbac/admin", role, false},
	}
	for _, tt := range tests {
		t.Run(tt.sel+" "+tt.ref.String(), func(t *testing.T) {
			sel, err := ParseSelector(tt.sel)
			if err != nil {
				t.Fatalf("ParseSelector(%q): %v", tt.sel, err)
			}
			if got := sel.Matches(tt.ref); got != tt.want {
				t.Errorf("ParseSelector(%q).Matches(%v) = %v, want %v", tt.sel, tt.ref, got, tt.want)
			}
		})
	}
}

func TestSourceString(t *testing.T) {
	tests := map[string]Source{
		"a.yaml:3": {File: "a.yaml", Line: 3},
		"a.yaml":   {File: "a.yaml"},
		"external-dns@1.15.0 templates/deployment.yaml (apps/kustomization.yaml:8)": {File: "apps/kustomization.yaml", Line: 8, Chart: "external-dns@1.15.0", Template: "templates/deployment.yaml"},
		"external-dns@1.15.0 (apps/kustomization.yaml)":                             {File: "apps/kustomization.yaml", Chart: "external-dns@1.15.0"},
	}
	for want, s := range tests {
		if got := s.String(); got != want {
			t.Errorf("%#v.String() = %q, want %q", s, got, want)
		}
	}
}
