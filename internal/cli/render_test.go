package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
)

// dryRunRecorder is a proxy in front of the test API server that keeps
// the body of every server-side-apply dry run: what a plan sends.
type dryRunRecorder struct {
	mu     sync.Mutex
	bodies []map[string]any
}

// recordingKubeconfig starts the proxy and returns a kubeconfig that
// points at it.
func recordingKubeconfig(t *testing.T) (string, *dryRunRecorder) {
	t.Helper()
	target, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	rec := &dryRunRecorder{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = transport
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && r.URL.Query().Get("dryRun") == "All" {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				t.Error(err)
			}
			var obj map[string]any
			if err := json.Unmarshal(body, &obj); err != nil {
				t.Errorf("dry-run body: %v", err)
			}
			rec.mu.Lock()
			rec.bodies = append(rec.bodies, obj)
			rec.mu.Unlock()
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: %q}\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n", srv.URL)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, rec
}

// kustomizeApp is a kustomization whose objects have no namespace (-n
// gives it), with generated names, a Secret and a cluster-scoped object.
func kustomizeApp(t *testing.T, ns string) string {
	return manifests(t, ns, map[string]string{
		"kustomization.yaml": `resources: [app.yaml, role.yaml]
labels:
- pairs: {app.kubernetes.io/part-of: shop}
configMapGenerator:
- name: settings
  literals: [color=blue]
secretGenerator:
- name: creds
  literals: [password=s3cr3t-string-data-value]
images:
- name: nginx
  newTag: 1.27.3
`,
		"app.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        envFrom: [{configMapRef: {name: settings}}, {secretRef: {name: creds}}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
`,
		"role.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: NS-reader}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
`,
	})
}

// keyOf names an object in a comparison.
func keyOf(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	return fmt.Sprintf("%s/%s/%s", o["kind"], ns, md["name"])
}

// TestRenderIsWhatPlanSends compares, object for object, the output of
// render with the bodies of the dry runs a plan of the same kustomization
// sends to the API server.
func TestRenderIsWhatPlanSends(t *testing.T) {
	ns := env.Namespace(t)
	dir := kustomizeApp(t, ns)
	kc, rec := recordingKubeconfig(t)
	db := filepath.Join(t.TempDir(), "s.db")
	common := []string{"-n", ns, "--kubeconfig", kc, "--name", ns, "--inventory-namespace", ns, "-q"}
	if r := runRaw(t, append([]string{"plan", dir, "--store", db}, common...)...); r.code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := runRaw(t, append([]string{"render", dir, "-o", "json", "--show-secrets"}, common...)...)
	if r.code != 0 {
		t.Fatalf("render: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var list struct {
		Kind  string           `json:"kind"`
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("render -o json: %v\n%s", err, r.stdout)
	}
	sent := map[string]map[string]any{}
	for _, b := range rec.bodies {
		sent[keyOf(b)] = b
	}
	rendered := map[string]map[string]any{}
	var order []string
	for _, o := range list.Items {
		rendered[keyOf(o)] = o
		order = append(order, keyOf(o))
	}
	if len(sent) != 5 {
		t.Errorf("the plan dry-ran %d objects, want 5: %v", len(sent), rec.bodies)
	}
	if diff := cmp.Diff(sent, rendered); diff != "" {
		t.Errorf("render output differs from what plan sends (-sent +rendered):\n%s", diff)
	}
	// In the order apply sends them: prerequisites (the ClusterRole, the
	// ConfigMap, the Secret, the Service), then workloads; by identity
	// inside a wave.
	wantOrder := []string{"ClusterRole//" + ns + "-reader", "ConfigMap/" + ns + "/settings-", "Secret/" + ns + "/creds-", "Service/" + ns + "/web", "Deployment/" + ns + "/web"}
	for i, w := range wantOrder {
		if i >= len(order) || !strings.HasPrefix(order[i], w) {
			t.Errorf("render order %v, want %v", order, wantOrder)
			break
		}
	}
	// The same again: stable.
	if again := runRaw(t, append([]string{"render", dir, "-o", "json", "--show-secrets"}, common...)...); again.stdout != r.stdout {
		t.Errorf("a second render differs:\n%s\n---\n%s", r.stdout, again.stdout)
	}
}

// TestRenderRedactsSecrets checks that render shows Secret values as the
// digests of the store's plans, and source annotations only when asked.
func TestRenderRedactsSecrets(t *testing.T) {
	ns := env.Namespace(t)
	dir := manifests(t, ns, map[string]string{"secret.yaml": secretManifest("s3cr3t-data-value")})
	db := filepath.Join(t.TempDir(), "s.db")
	inv := []string{"--store", db, "--name", ns, "--inventory-namespace", ns, "-q"}
	plan := snapply(t, append([]string{"plan", dir, "-o", "json"}, inv...)...)
	if plan.code != 0 {
		t.Fatalf("plan: exit %d\n%s", plan.code, plan.stderr)
	}
	var outputs []string
	for _, args := range [][]string{{"-o", "yaml"}, {"-o", "json"}, {"--show-source"}, {"--offline"}} {
		r := snapply(t, append(append([]string{"render", dir}, inv...), args...)...)
		if r.code != 0 {
			t.Fatalf("render %v: exit %d\n%s", args, r.code, r.stderr)
		}
		outputs = append(outputs, r.stdout, r.stderr)
		if strings.Contains(r.stdout, "snapply.dev/source") != (args[0] == "--show-source") {
			t.Errorf("render %v: source annotation only with --show-source:\n%s", args, r.stdout)
		}
	}
	if !strings.Contains(outputs[4], "snapply.dev/source: secret.yaml:1") {
		t.Errorf("--show-source: no source annotation:\n%s", outputs[4])
	}
	// The digests are the plan's: the plan's diff holds the same markers.
	for _, line := range strings.Split(outputs[0], "\n") {
		if _, digest, ok := strings.Cut(line, "token: "); ok {
			if !strings.Contains(plan.stdout, digest) {
				t.Errorf("render's digest %s is not in the plan:\n%s", digest, plan.stdout)
			}
		}
	}
	joined := strings.Join(outputs, "\n")
	if !strings.Contains(joined, "<redacted sha256:") {
		t.Errorf("no redacted digest in render's output:\n%s", joined)
	}
	for _, v := range secretValues {
		if strings.Contains(joined, v) {
			t.Errorf("render printed the secret value %q", v)
		}
	}
}
