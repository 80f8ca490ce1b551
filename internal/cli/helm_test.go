package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/snapply/snapply/internal/testenv"
)

// clusterAwareChart is a chart whose output depends on the cluster: a
// Probe only when the API serves the Probe kind (Capabilities.APIVersions),
// a ConfigMap that shows a live ConfigMap's value (lookup), and a Secret
// whose password is random unless it already exists (lookup), the usual
// way charts keep a generated password.
var clusterAwareChart = map[string]string{
	"kustomization.yaml": `namespace: NS
helmCharts:
- name: probe
  version: 1.2.3
  releaseName: web
  valuesInline:
    group: NS.example.com
`,
	"charts/probe/Chart.yaml":  "apiVersion: v2\nname: probe\nversion: 1.2.3\n",
	"charts/probe/values.yaml": "group: example.com\n",
	"charts/probe/templates/probe.yaml": `{{- if .Capabilities.APIVersions.Has (printf "%s/v1/Probe" .Values.group) }}
apiVersion: {{ .Values.group }}/v1
kind: Probe
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
spec:
  target: {{ .Release.Name }}
{{- end }}
`,
	"charts/probe/templates/seen.yaml": `{{- $cm := lookup "v1" "ConfigMap" .Release.Namespace "existing" }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-seen
  namespace: {{ .Release.Namespace }}
data:
  color: {{ if $cm }}{{ $cm.data.color | quote }}{{ else }}"none"{{ end }}
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
`,
	"charts/probe/templates/secret.yaml": `{{- $s := lookup "v1" "Secret" .Release.Namespace "web-password" }}
apiVersion: v1
kind: Secret
metadata:
  name: web-password
  namespace: {{ .Release.Namespace }}
data:
  password: {{ if $s }}{{ index $s.data "password" }}{{ else }}{{ randAlphaNum 24 | b64enc }}{{ end }}
`,
}

// planChanges is the part of the JSON plan the Helm tests read.
type planChanges struct {
	Changes []struct {
		Ref      map[string]string `json:"ref"`
		Action   string            `json:"action"`
		Warnings []string          `json:"warnings"`
		Source   struct {
			File     string `json:"file"`
			Line     int    `json:"line"`
			Chart    string `json:"chart"`
			Template string `json:"template"`
		} `json:"source"`
		Diff string `json:"diff"`
	} `json:"changes"`
}

func planJSON(t *testing.T, dir, db string) planChanges {
	t.Helper()
	r := snapply(t, "plan", dir, "--store", db, "-o", "json")
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	var p planChanges
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("plan output is not JSON (%v):\n%s", err, r.stdout)
	}
	return p
}

// TestHelmChartRendersAgainstTheCluster plans a chart twice: once against
// a cluster without the Probe API and the ConfigMap it looks up, once with
// both. The chart renders differently, the random password is reported as
// non-deterministic until the Secret exists, and every object names its
// chart and template.
func TestHelmChartRendersAgainstTheCluster(t *testing.T) {
	ns := env.Namespace(t)
	ctx := context.Background()
	dir := manifests(t, ns, clusterAwareChart)
	db := filepath.Join(t.TempDir(), "s.db")

	before := planJSON(t, dir, db)
	got := map[string]string{}
	for _, c := range before.Changes {
		got[c.Ref["kind"]+"/"+c.Ref["name"]] = c.Source.Chart + " " + c.Source.Template
		if c.Source.File != "kustomization.yaml" || c.Source.Line != 3 {
			t.Errorf("%s: source %+v, want the helmCharts entry kustomization.yaml:3", c.Ref["name"], c.Source)
		}
		switch c.Ref["kind"] {
		case "Secret":
			want := ".data.password: non-deterministic, will change on every apply (the chart renders a new value each time)"
			if !slices.Contains(c.Warnings, want) {
				t.Errorf("secret warnings %q, want %q", c.Warnings, want)
			}
		case "ConfigMap":
			if !strings.Contains(c.Diff, "color: none") {
				t.Errorf("without the live ConfigMap, lookup should find nothing:\n%s", c.Diff)
			}
			if len(c.Warnings) > 0 {
				t.Errorf("configmap warnings %q, want none", c.Warnings)
			}
		}
	}
	want := map[string]string{"ConfigMap/web-seen": "probe@1.2.3 templates/seen.yaml", "Secret/web-password": "probe@1.2.3 templates/secret.yaml"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: source %q, want %q", k, got[k], v)
		}
	}
	if len(got) != 2 {
		t.Errorf("objects %v, want no Probe while the API does not serve it", got)
	}

	// Install the Probe API, the ConfigMap the chart looks up and the
	// Secret it keeps its password in.
	createProbeCRD(t, ns)
	cs := clientset(t)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "existing"}, Data: map[string]string{"color": "green"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-password"}, Data: map[string][]byte{"password": []byte("kept-password")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	after := planJSON(t, dir, db)
	kinds := map[string]string{}
	for _, c := range after.Changes {
		kinds[c.Ref["kind"]] = c.Action
		if c.Ref["kind"] == "ConfigMap" && !strings.Contains(c.Diff, "color: green") {
			t.Errorf("lookup should read the live ConfigMap:\n%s", c.Diff)
		}
		if len(c.Warnings) > 0 {
			t.Errorf("%s: warnings %q, want none once the chart reads its password back", c.Ref["name"], c.Warnings)
		}
	}
	delete(kinds, "Secret") // an update: it gains the inventory's label
	if diff := map[string]string{"Probe": "create", "ConfigMap": "create"}; !mapsEqual(diff, kinds) {
		t.Errorf("actions %v, want %v", kinds, diff)
	}

	// Rendering only read the cluster.
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "existing", metav1.GetOptions{})
	if err != nil || cm.Data["color"] != "green" || len(cm.ManagedFields) != 1 {
		t.Errorf("the looked-up ConfigMap changed: %+v, %v", cm, err)
	}
}

// createProbeCRD installs the Probe kind in group NS.example.com and waits
// until it is served.
func createProbeCRD(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "probes." + ns + ".example.com"},
		"spec": map[string]any{
			"group": ns + ".example.com",
			"scope": "Namespaced",
			"names": map[string]any{"kind": "Probe", "plural": "probes", "singular": "probe", "listKind": "ProbeList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{}) })
	probes := dyn.Resource(schema.GroupVersionResource{Group: ns + ".example.com", Version: "v1", Resource: "probes"})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := probes.Namespace(ns).List(ctx, metav1.ListOptions{}); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the Probe CRD is not served after 30s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestLockThenPlan locks a chart served by an HTTP chart repository, then
// plans it: plan reads the lock file and never writes it, and a plan
// without the lock file says to run snapply lock.
func TestLockThenPlan(t *testing.T) {
	ns := env.Namespace(t)
	t.Setenv("SNAPPLY_CHART_CACHE", t.TempDir())
	tgz := packagedChart(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/index.yaml":
			_, _ = w.Write([]byte("apiVersion: v1\nentries:\n  hello:\n  - version: 0.3.0\n    urls: [hello-0.3.0.tgz]\n"))
		case "/hello-0.3.0.tgz":
			_, _ = w.Write(tgz)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := manifests(t, ns, map[string]string{
		"kustomization.yaml": "namespace: NS\nhelmCharts:\n- name: hello\n  repo: " + srv.URL + "\n  version: 0.3.0\n",
	})
	db := filepath.Join(t.TempDir(), "s.db")

	r := snapply(t, "plan", dir, "--store", db)
	want := "error: render: kustomization.yaml:3: helm chart hello: " + srv.URL + "/hello@0.3.0 is not in snapply.lock: run `snapply lock PATH` to add it\n"
	if r.code != 1 || !strings.HasSuffix(r.stderr, want) {
		t.Fatalf("plan without a lock: exit %d\n%s\nwant the last line %q", r.code, r.stderr, want)
	}
	if r := runRaw(t, "lock", dir); r.code != 0 || !strings.Contains(r.stdout, "snapply.lock") {
		t.Fatalf("lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lock, err := os.ReadFile(filepath.Join(dir, "snapply.lock"))
	if err != nil {
		t.Fatal(err)
	}
	p := planJSON(t, dir, db)
	if len(p.Changes) != 1 || p.Changes[0].Source.Chart != "hello@0.3.0" || p.Changes[0].Action != "create" {
		t.Errorf("plan: %+v", p.Changes)
	}
	after, err := os.ReadFile(filepath.Join(dir, "snapply.lock"))
	if err != nil || !bytes.Equal(lock, after) {
		t.Errorf("plan changed the lock file:\n%s\n%s", lock, after)
	}
}

// packagedChart returns a small packaged chart, hello 0.3.0.
func packagedChart(t *testing.T) []byte {
	t.Helper()
	src := manifests(t, "", map[string]string{
		"hello/Chart.yaml":        "apiVersion: v2\nname: hello\nversion: 0.3.0\n",
		"hello/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  hello: world\n",
	})
	c, err := loader.LoadDir(filepath.Join(src, "hello"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := chartutil.Save(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// realChart is a chart from a Go module, as the apply test uses it.
type realChart struct {
	module, name, version, values string
	templates                     map[string]string // kind -> the template it comes from
	count                         int               // objects applied
}

// TestRealChartsPlannedAndApplied plans and applies real-world charts
// (external-dns with its CRDs, metrics-server, from their Go modules)
// against the API server, then applies them again: a chart that renders
// the same bytes every time changes nothing the second time.
func TestRealChartsPlannedAndApplied(t *testing.T) {
	for _, c := range []realChart{
		{
			module: "sigs.k8s.io/external-dns@v0.15.1", name: "external-dns", version: "1.15.0",
			values: "provider: {name: aws}\n    domainFilters: [example.com]",
			templates: map[string]string{
				"CustomResourceDefinition": "crds/dnsendpoint.yaml", "ClusterRole": "templates/clusterrole.yaml",
				"ClusterRoleBinding": "templates/clusterrolebinding.yaml", "Deployment": "templates/deployment.yaml",
				"Service": "templates/service.yaml", "ServiceAccount": "templates/serviceaccount.yaml",
			},
			count: 6,
		},
		{
			// The APIService would point discovery at a backend that
			// does not run here, for every test of the package.
			module: "sigs.k8s.io/metrics-server@v0.7.2", name: "metrics-server", version: "3.12.1",
			values: "apiService: {create: false}\n    podDisruptionBudget: {enabled: true, minAvailable: 1}",
			templates: map[string]string{
				"Deployment": "templates/deployment.yaml", "Service": "templates/service.yaml",
				"PodDisruptionBudget": "templates/pdb.yaml", "RoleBinding": "templates/rolebinding.yaml",
			},
			count: 9,
		},
	} {
		t.Run(c.name, func(t *testing.T) { testRealChart(t, c) })
	}
}

func testRealChart(t *testing.T, c realChart) {
	ns := env.Namespace(t)
	dir := t.TempDir()
	testenv.CopyTree(t, filepath.Join(testenv.ModuleDir(t, c.module), "charts", c.name), filepath.Join(dir, "charts", c.name))
	// The test API server is built without version stamps (its
	// gitVersion is v0.0.0-...): say which version it is, as charts
	// compare it.
	kust := "namespace: " + ns + "\nhelmCharts:\n- name: " + c.name + "\n  version: " + c.version + "\n  releaseName: " + ns +
		"\n  includeCRDs: true\n  kubeVersion: v1.36.3\n  valuesInline:\n    " + c.values + "\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kust), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "s.db")

	p := planJSON(t, dir, db)
	kinds := map[string]string{}
	for _, ch := range p.Changes {
		kinds[ch.Ref["kind"]] = ch.Source.Chart + " " + ch.Source.Template
		if ch.Action != "create" && ch.Action != "unchanged" {
			t.Errorf("%s %s: %s", ch.Ref["kind"], ch.Ref["name"], ch.Action)
		}
	}
	for kind, tmpl := range c.templates {
		if want := c.name + "@" + c.version + " " + tmpl; kinds[kind] != want {
			t.Errorf("%s: source %q, want %q", kind, kinds[kind], want)
		}
	}
	applied := fmt.Sprintf("Apply: %d applied", c.count)
	if r := applyIn(t, ns, db, dir, "--wait=false"); r.code != 0 || !strings.Contains(r.stdout, applied) {
		t.Fatalf("apply: exit %d, want %q\n%s\n%s", r.code, applied, r.stdout, r.stderr)
	}
	if _, err := clientset(t).AppsV1().Deployments(ns).Get(context.Background(), ns+"-"+c.name, metav1.GetOptions{}); err != nil {
		t.Errorf("the chart's Deployment is not in the cluster: %v", err)
	}
	unchanged := fmt.Sprintf("0 applied, %d unchanged", c.count)
	if r := applyIn(t, ns, db, dir, "--wait=false"); r.code != 0 || !strings.Contains(r.stdout, unchanged) {
		t.Fatalf("second apply: exit %d, want %q\n%s\n%s", r.code, unchanged, r.stdout, r.stderr)
	}
	// Prune what the chart put outside the test's namespace.
	if r := applyIn(t, ns, db, manifests(t, ns, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: left, namespace: NS}\n"}), "--wait=false", "--allow-destructive"); r.code != 0 {
		t.Errorf("prune: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
