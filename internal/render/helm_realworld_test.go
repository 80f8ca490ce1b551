package render

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/testenv"
)

// realChart is a chart published in a Go module, rendered with the values
// of a test.
type realChart struct {
	module, dir, name, version string
	values                     string // valuesInline, as YAML
	apiVersions                []string
	mustHave                   string // an object the values turn on
}

// realCharts are real-world charts the acceptance of the Helm support
// names: external-dns (CRDs, a values schema) and metrics-server (an
// APIService, many RBAC objects).
var realCharts = []realChart{
	{
		module: "sigs.k8s.io/external-dns@v0.15.1", dir: "charts/external-dns", name: "external-dns", version: "1.15.0",
		values:      "provider:\n  name: aws\nsources: [service, ingress]\ndomainFilters: [example.com]\nserviceMonitor:\n  enabled: true\nenv:\n- name: AWS_DEFAULT_REGION\n  value: eu-west-1\n",
		apiVersions: []string{"monitoring.coreos.com/v1/ServiceMonitor"},
		mustHave:    "servicemonitor.monitoring.coreos.com/rel-external-dns -n infra",
	},
	{
		module: "sigs.k8s.io/metrics-server@v0.7.2", dir: "charts/metrics-server", name: "metrics-server", version: "3.12.1",
		values:   "replicas: 2\npodDisruptionBudget:\n  enabled: true\n  minAvailable: 1\nargs: [--kubelet-insecure-tls]\n",
		mustHave: "poddisruptionbudget.policy/rel-metrics-server -n infra",
	},
}

// realChartRoot writes a repository that renders c through a
// kustomization, the chart copied from its module under charts/.
func realChartRoot(t testing.TB, c realChart) string {
	t.Helper()
	root := t.TempDir()
	testenv.CopyTree(t, filepath.Join(testenv.ModuleDir(t, c.module), c.dir), filepath.Join(root, "charts", c.name))
	var vals map[string]any
	if err := sigsyaml.Unmarshal([]byte(c.values), &vals); err != nil {
		t.Fatal(err)
	}
	entry := map[string]any{
		"name": c.name, "version": c.version, "releaseName": "rel", "namespace": "infra",
		"includeCRDs": true, "kubeVersion": "v1.36.3", "valuesInline": vals,
	}
	if len(c.apiVersions) > 0 {
		entry["apiVersions"] = c.apiVersions
	}
	k, err := sigsyaml.Marshal(map[string]any{"helmCharts": []any{entry}})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"kustomization.yaml": string(k), "values.yaml": c.values} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestRealChartsMatchHelmTemplate renders real-world charts from their Go
// modules and compares the objects with what `helm template` prints for
// the same values, with a helm binary built from the same Helm module.
func TestRealChartsMatchHelmTemplate(t *testing.T) {
	helm, err := testenv.Tool(testenv.HelmBinary)
	if err != nil {
		t.Skipf("no helm binary to compare with (build it with `hack/tools.sh helm`): %v", err)
	}
	for _, c := range realCharts {
		t.Run(c.name, func(t *testing.T) {
			root := realChartRoot(t, c)
			objs, err := Render(context.Background(), root, Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]any{}
			for _, o := range objs {
				got[o.Ref.String()] = o.Obj.Object
				want := object.Source{File: "kustomization.yaml", Line: 2, Chart: c.name + "@" + c.version}
				if o.Source.Template == "" || o.Source.File != want.File || o.Source.Line != want.Line || o.Source.Chart != want.Chart {
					t.Errorf("%s: source %#v", o.Ref, o.Source)
				}
			}

			home := t.TempDir()
			args := []string{"template", "rel", filepath.Join(root, "charts", c.name), "--namespace", "infra",
				"--include-crds", "-f", filepath.Join(root, "values.yaml"), "--kube-version", "v1.36.3"}
			for _, v := range c.apiVersions {
				args = append(args, "--api-versions", v)
			}
			cmd := exec.Command(helm, args...)
			cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home, "HELM_DATA_HOME="+home)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("helm template: %v\n%s", err, stderr.String())
			}
			helmObjs, err := decode("helm template", out)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{}
			for _, o := range helmObjs {
				want[o.Ref.String()] = o.Obj.Object
			}
			if _, ok := got[c.mustHave]; !ok {
				t.Errorf("no %s among %d objects", c.mustHave, len(got))
			}
			if len(want) < 5 {
				t.Fatalf("helm template printed only %d objects: the comparison would prove little", len(want))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("snapply's rendering differs from helm template (-helm +snapply):\n%s", diff)
			}
			if !strings.Contains(string(out), "# Source: "+c.name+"/templates/") {
				t.Errorf("helm output has no Source comments: %.200s", out)
			}
		})
	}
}

// BenchmarkRenderExternalDNS measures rendering the external-dns chart
// through a kustomization (each render runs the chart twice, to find
// non-deterministic fields).
func BenchmarkRenderExternalDNS(b *testing.B) {
	root := realChartRoot(b, realCharts[0])
	b.ResetTimer()
	for b.Loop() {
		if _, err := Render(context.Background(), root, Options{Root: root}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHelmMatchesKustomizeBuildEnableHelm builds the chart fixture (a
// chart with CRDs, a test hook and NOTES.txt, in a kustomization with
// labels, images, a patch and a namespace) both with snapply and with
// kustomize's own helm generator running the helm binary (`kustomize build
// --enable-helm`): the objects must be the same.
func TestHelmMatchesKustomizeBuildEnableHelm(t *testing.T) {
	helm, err := testenv.Tool(testenv.HelmBinary)
	if err != nil {
		t.Skipf("no helm binary to compare with (build it with `hack/tools.sh helm`): %v", err)
	}
	root := t.TempDir()
	testenv.CopyTree(t, "testdata/helm/app", root)
	// Both renders must see the same Kubernetes version: helm's default is
	// its client-go's, snapply's (without a cluster) is Helm's default.
	k, err := os.ReadFile(filepath.Join(root, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k = append(k, "    kubeVersion: v1.36.0\n"...)
	if err := os.WriteFile(filepath.Join(root, "kustomization.yaml"), k, 0o644); err != nil {
		t.Fatal(err)
	}

	objs, err := Render(context.Background(), root, Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, o := range objs {
		got[o.Ref.String()] = o.Obj.Object
	}

	opts := krusty.MakeDefaultOptions()
	opts.PluginConfig = types.EnabledPluginConfig(types.BploUseStaticallyLinked)
	opts.PluginConfig.HelmConfig.Command = helm
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), root)
	if err != nil {
		t.Fatalf("kustomize build --enable-helm: %v", err)
	}
	want := map[string]any{}
	for _, res := range m.Resources() {
		b, err := res.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := utiljson.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		u, err := newObject(v)
		if err != nil {
			t.Fatal(err)
		}
		want[object.RefOf(u).String()] = v
	}
	if len(want) != 5 {
		t.Errorf("kustomize built %d objects, want 5 (4 from the chart, 1 resource)", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapply differs from kustomize build --enable-helm (-kustomize +snapply):\n%s", diff)
	}
}
