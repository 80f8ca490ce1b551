package render

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/snapply/snapply/internal/object"
)

// demoChart is a small chart: a ConfigMap that shows a value, the kube
// version and the release namespace, a Deployment and a Secret.
var demoChart = map[string]string{
	"charts/demo/Chart.yaml":  "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
	"charts/demo/values.yaml": "greeting: hi\nnested:\n  a: chart\n  b: chart\nlist: [chart]\n",
	"charts/demo/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cm
  namespace: {{ .Release.Namespace }}
data:
  greeting: {{ .Values.greeting | quote }}
  a: {{ .Values.nested.a | quote }}
  b: {{ .Values.nested.b | quote }}
  list: {{ .Values.list | join "," | quote }}
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
`,
}

// renderFiles writes files into a new root and renders it.
func renderFiles(t *testing.T, files map[string]string, opts Options) ([]object.Object, error) {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, files)
	opts.Root = dir
	return Render(context.Background(), dir, opts)
}

// with returns a copy of base with more files.
func with(base map[string]string, more map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// TestHelmChartThroughKustomization renders the chart fixture: the chart's
// objects go through the rest of the kustomization (labels, images,
// patches, namespace), NOTES.txt and test hooks are left out, CRDs come
// with includeCRDs, and every object names its chart and template.
func TestHelmChartThroughKustomization(t *testing.T) {
	objs, err := Render(context.Background(), "testdata/helm/app", Options{Root: "testdata/helm"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	byRef := map[string]object.Object{}
	for _, o := range objs {
		got[o.Ref.String()] = o.Source.String()
		byRef[o.Ref.String()] = o
		if o.Obj.GetLabels()["team"] != "web" {
			t.Errorf("%s: labels = %v, want team: web from the kustomization", o.Ref, o.Obj.GetLabels())
		}
		for k := range o.Obj.GetAnnotations() {
			if strings.Contains(k, "snapply.dev") || strings.Contains(k, "config.kubernetes.io") {
				t.Errorf("%s: internal annotation %s left on the object", o.Ref, k)
			}
		}
	}
	const entry = "(app/kustomization.yaml:21)"
	want := map[string]string{
		"configmap/extra -n apps": "app/extra.yaml:1",
		"customresourcedefinition.apiextensions.k8s.io/widgets.demo.example.com": "demo@0.1.0 crds/widgets.yaml " + entry,
		"secret/web-demo":            "demo@0.1.0 templates/secret.yaml " + entry,
		"configmap/web-demo -n apps": "demo@0.1.0 templates/configmap.yaml " + entry,
		"deployment.apps/web-demo":   "demo@0.1.0 templates/deployment.yaml " + entry,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects and sources (-want +got):\n%s", diff)
	}
	dep := byRef["deployment.apps/web-demo"].Obj
	if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != 3 {
		t.Errorf("replicas = %d, want 3 from the kustomization's patch", r)
	}
	cs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if img := cs[0].(map[string]any)["image"]; img != "nginx:1.27" {
		t.Errorf("image = %v, want nginx:1.27 from the kustomization's images", img)
	}
	cm := byRef["configmap/web-demo -n apps"].Obj
	if g, _, _ := unstructured.NestedString(cm.Object, "data", "greeting"); g != "hello" {
		t.Errorf("greeting = %q, want hello from valuesInline", g)
	}
	if ns := byRef["deployment.apps/web-demo"].DefaultNamespace; ns != "apps" {
		t.Errorf("DefaultNamespace = %q, want the release namespace apps (kustomize leaves a chart's objects without namespace as they are)", ns)
	}
	src := byRef["deployment.apps/web-demo"].Source
	if src.File != "app/kustomization.yaml" || src.Line != 21 || src.Chart != "demo@0.1.0" || src.Template != "templates/deployment.yaml" {
		t.Errorf("source = %#v", src)
	}
}

// TestHelmValues checks how valuesFile, valuesInline, valuesMerge and
// additionalValuesFiles combine, as kustomize and `helm template -f`
// combine them.
func TestHelmValues(t *testing.T) {
	tests := []struct {
		name  string
		entry string
		files map[string]string
		want  map[string]string
	}{
		{
			name:  "chart defaults",
			entry: "  - name: demo\n",
			want:  map[string]string{"greeting": "hi", "a": "chart", "b": "chart", "list": "chart"},
		},
		{
			name:  "inline overrides the chart's values by default",
			entry: "  - name: demo\n    valuesInline:\n      nested: {a: inline}\n      list: [inline]\n",
			want:  map[string]string{"greeting": "hi", "a": "inline", "b": "chart", "list": "inline"},
		},
		{
			name:  "valuesMerge: merge keeps the file's values",
			entry: "  - name: demo\n    valuesMerge: merge\n    valuesInline:\n      greeting: inline\n      extra: x\n",
			want:  map[string]string{"greeting": "hi", "a": "chart", "b": "chart", "list": "chart"},
		},
		{
			name:  "valuesMerge: replace drops the values file",
			entry: "  - name: demo\n    valuesMerge: replace\n    valuesInline:\n      greeting: inline\n      nested: {a: inline}\n",
			want:  map[string]string{"greeting": "inline", "a": "inline", "b": "chart", "list": "chart"},
		},
		{
			name:  "valuesFile then additionalValuesFiles in order",
			entry: "  - name: demo\n    valuesFile: values/base.yaml\n    additionalValuesFiles: [values/one.yaml, values/two.yaml]\n",
			files: map[string]string{
				"values/base.yaml": "greeting: base\n",
				"values/one.yaml":  "nested: {a: one, b: one}\n",
				"values/two.yaml":  "nested: {b: two}\n",
			},
			want: map[string]string{"greeting": "base", "a": "one", "b": "two", "list": "chart"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := with(demoChart, tt.files)
			files["kustomization.yaml"] = "helmCharts:\n" + tt.entry
			objs, err := renderFiles(t, files, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != 1 {
				t.Fatalf("got %d objects, want 1", len(objs))
			}
			data, _, _ := unstructured.NestedStringMap(objs[0].Obj.Object, "data")
			delete(data, "kube")
			if diff := cmp.Diff(tt.want, data); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHelmReleaseAndNamespace checks the release name (the entry's, else
// the chart's) and the release namespace (the entry's, else the
// kustomization's, else the namespace of the kustomization that includes
// it, else default).
func TestHelmReleaseAndNamespace(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"defaults", map[string]string{"kustomization.yaml": "helmCharts:\n- name: demo\n"}, "configmap/demo-cm -n default"},
		{"entry", map[string]string{"kustomization.yaml": "helmCharts:\n- name: demo\n  releaseName: web\n  namespace: web-ns\n"}, "configmap/web-cm -n web-ns"},
		{"kustomization's namespace", map[string]string{"kustomization.yaml": "namespace: k-ns\nhelmCharts:\n- name: demo\n"}, "configmap/demo-cm -n k-ns"},
		{"including kustomization's namespace", map[string]string{
			"kustomization.yaml":                 "namespace: top\nresources: [base]\n",
			"base/kustomization.yaml":            "helmCharts:\n- name: demo\n",
			"base/charts/demo/Chart.yaml":        demoChart["charts/demo/Chart.yaml"],
			"base/charts/demo/values.yaml":       demoChart["charts/demo/values.yaml"],
			"base/charts/demo/templates/cm.yaml": demoChart["charts/demo/templates/cm.yaml"],
		}, "configmap/demo-cm -n top"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := renderFiles(t, with(demoChart, tt.files), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := objs[0].Ref.String(); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// TestHelmPackagedChart renders a chart packaged as a .tgz inside the
// repository, from a chartHome set in helmGlobals.
func TestHelmPackagedChart(t *testing.T) {
	src := t.TempDir()
	write(t, src, demoChart)
	c, err := loader.LoadDir(filepath.Join(src, "charts/demo"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write(t, root, map[string]string{"kustomization.yaml": "helmGlobals:\n  chartHome: vendor\nhelmCharts:\n- name: demo\n  version: 0.1.0\n  releaseName: packed\n"})
	if _, err := chartutil.Save(c, filepath.Join(root, "vendor")); err != nil {
		t.Fatal(err)
	}
	objs, err := Render(context.Background(), root, Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := objs[0].Ref.String()+" "+objs[0].Source.String(), "configmap/packed-cm -n default demo@0.1.0 templates/cm.yaml (kustomization.yaml:4)"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestHelmErrors checks that a bad helmCharts entry is one line of error
// naming the kustomization and the entry's line.
func TestHelmErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{
			name:  "no chart",
			files: map[string]string{"kustomization.yaml": "resources: []\nhelmCharts:\n- name: nothere\n"},
			want:  "render: kustomization.yaml:3: helm chart nothere: no chart found at charts/nothere (a directory, or a .tgz)",
		},
		{
			name:  "remote chart not vendored",
			files: map[string]string{"kustomization.yaml": "helmCharts:\n- name: dns\n  repo: https://charts.example.com\n  version: 1.0.0\n"},
			want:  "render: kustomization.yaml:2: helm chart dns: not found at charts/dns-1.0.0/dns: charts from a repository (https://charts.example.com) must be in the repository, for example with `helm pull --untar --untardir charts/dns-1.0.0 dns --repo https://charts.example.com --version 1.0.0`",
		},
		{
			name:  "version mismatch",
			files: with(demoChart, map[string]string{"kustomization.yaml": "helmCharts:\n- name: demo\n  version: 9.9.9\n"}),
			want:  "render: kustomization.yaml:2: helm chart demo@0.1.0: the kustomization asks for version 9.9.9, the chart is 0.1.0",
		},
		{
			name: "template error",
			files: with(demoChart, map[string]string{
				"kustomization.yaml":              "helmCharts:\n- name: demo\n",
				"charts/demo/templates/fail.yaml": "{{ required \"set .Values.host\" .Values.host }}\n",
			}),
			want: "render: kustomization.yaml:2: helm chart demo@0.1.0: execution error at (demo/templates/fail.yaml:1:3): set .Values.host",
		},
		{
			name:  "bad valuesMerge",
			files: with(demoChart, map[string]string{"kustomization.yaml": "helmCharts:\n- name: demo\n  valuesMerge: sideways\n  valuesInline: {a: b}\n"}),
			want:  "render: kustomization.yaml:2: helm chart demo: valuesMerge must be one of merge, override or replace",
		},
		{
			name:  "missing values file",
			files: with(demoChart, map[string]string{"kustomization.yaml": "helmCharts:\n- name: demo\n  additionalValuesFiles: [nope.yaml]\n"}),
			want:  "render: kustomization.yaml:2: helm chart demo@0.1.0: additionalValuesFiles: nope.yaml: no such file or directory",
		},
		{
			name:  "chart home outside the root",
			files: map[string]string{"kustomization.yaml": "helmGlobals: {chartHome: /}\nhelmCharts:\n- name: etc\n"},
			want:  "render: kustomization.yaml:3: helm chart etc: ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := renderFiles(t, tt.files, Options{})
			if err == nil {
				t.Fatal("no error")
			}
			var rerr *Error
			if !errors.As(err, &rerr) {
				t.Errorf("error is %T, want *Error", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			if !strings.HasPrefix(msg, tt.want) || (!strings.HasSuffix(tt.want, ": ") && msg != tt.want) {
				t.Errorf("error:\n got %s\nwant %s", msg, tt.want)
			}
		})
	}
}

// TestHelmUnstable checks that a field a chart fills with randAlphaNum is
// reported as unstable, and only that field.
func TestHelmUnstable(t *testing.T) {
	files := with(demoChart, map[string]string{
		"kustomization.yaml": "helmCharts:\n- name: demo\n",
		"charts/demo/templates/secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-password
stringData:
  user: admin
  password: {{ randAlphaNum 16 | quote }}
`,
	})
	objs, err := renderFiles(t, files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, o := range objs {
		if len(o.Unstable) > 0 {
			got[o.Ref.String()] = o.Unstable
		}
	}
	want := map[string][]string{"secret/demo-password": {".stringData.password"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unstable fields (-want +got):\n%s", diff)
	}
}

// fakeCluster answers capabilities and lookups from memory, to check the
// plumbing; the real API server is exercised by the engine's tests.
type fakeCluster struct {
	version string
	apis    []string
	client  dynamic.NamespaceableResourceInterface
}

func (f fakeCluster) ServerVersion(context.Context) (string, error) { return f.version, nil }
func (f fakeCluster) APIVersions(context.Context) ([]string, error) { return f.apis, nil }
func (f fakeCluster) ResourceFor(_ context.Context, _, _ string) (dynamic.NamespaceableResourceInterface, bool, error) {
	return f.client, true, nil
}

// TestHelmCapabilitiesFromCluster checks that the cluster's version and
// API versions reach the templates, and that the entry's kubeVersion and
// apiVersions win over them.
func TestHelmCapabilitiesFromCluster(t *testing.T) {
	files := with(demoChart, map[string]string{
		"charts/demo/templates/sm.yaml": `{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor" }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ .Release.Name }}
{{- end }}
`,
	})
	cluster := fakeCluster{version: "v1.36.3-gke.100", apis: []string{"v1", "apps/v1", "monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor"}}
	tests := []struct {
		name, entry string
		cluster     Cluster
		want        []string
	}{
		{"with the API", "- name: demo\n", cluster, []string{"configmap/demo-cm -n default v1.36.3-gke.100", "servicemonitor.monitoring.coreos.com/demo"}},
		{"without it", "- name: demo\n", fakeCluster{version: "v1.35.0", apis: []string{"v1"}}, []string{"configmap/demo-cm -n default v1.35.0"}},
		{"unstamped server version, normalised", "- name: demo\n", fakeCluster{version: "v0.0.0-master+$Format:%H$", apis: []string{"v1"}}, []string{"configmap/demo-cm -n default v0.0.0"}},
		{"entry overrides", "- name: demo\n  kubeVersion: v1.30.1\n  apiVersions: [monitoring.coreos.com/v1/ServiceMonitor]\n", fakeCluster{version: "v1.35.0", apis: []string{"v1"}}, []string{"configmap/demo-cm -n default v1.30.1", "servicemonitor.monitoring.coreos.com/demo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files["kustomization.yaml"] = "helmCharts:\n" + tt.entry
			objs, err := renderFiles(t, files, Options{Cluster: tt.cluster})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				s := o.Ref.String()
				if k, ok, _ := unstructured.NestedString(o.Obj.Object, "data", "kube"); ok {
					s += " " + k
				}
				got = append(got, s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLookupIsReadOnly checks that the client lookup uses refuses writes.
func TestLookupIsReadOnly(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	p := readOnlyProvider{ctx: context.Background(), cluster: fakeCluster{client: dyn.Resource(gvr)}}
	c, _, err := p.GetClientFor("v1", "ConfigMap")
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	if _, err := c.Namespace("x").Create(context.Background(), u, metav1.CreateOptions{}); !errors.Is(err, errLookupWrite) {
		t.Errorf("Create: err = %v, want errLookupWrite", err)
	}
	if err := c.Delete(context.Background(), "x", metav1.DeleteOptions{}); !errors.Is(err, errLookupWrite) {
		t.Errorf("Delete: err = %v, want errLookupWrite", err)
	}
}

// TestHelmChartInSharedBase renders a base with a chart from two overlays
// in one walk: each kustomize run renders the chart for itself.
func TestHelmChartInSharedBase(t *testing.T) {
	files := map[string]string{
		"base/kustomization.yaml":            "helmCharts:\n- name: demo\n",
		"overlays/a/kustomization.yaml":      "namePrefix: a-\nresources: [../../base]\n",
		"overlays/b/kustomization.yaml":      "namePrefix: b-\nresources: [../../base]\n",
		"base/charts/demo/Chart.yaml":        demoChart["charts/demo/Chart.yaml"],
		"base/charts/demo/values.yaml":       demoChart["charts/demo/values.yaml"],
		"base/charts/demo/templates/cm.yaml": demoChart["charts/demo/templates/cm.yaml"],
	}
	dir := t.TempDir()
	write(t, dir, files)
	objs, err := Render(context.Background(), filepath.Join(dir, "overlays"), Options{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.Ref.String()+" "+o.Source.String())
	}
	want := []string{
		"configmap/a-demo-cm -n default demo@0.1.0 templates/cm.yaml (base/kustomization.yaml:2)",
		"configmap/b-demo-cm -n default demo@0.1.0 templates/cm.yaml (base/kustomization.yaml:2)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}
