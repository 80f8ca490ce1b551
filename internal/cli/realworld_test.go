package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/snapply/snapply/internal/testenv"
)

// The real-world tests plan and apply manifests nobody on the team wrote:
// kustomize trees and CRDs that public projects publish in their Go
// modules, read from the module cache (testenv.ModuleDir).

// realPlan is the part of the JSON plan the real-world tests read.
type realPlan struct {
	Summary map[string]int `json:"summary"`
	Changes []struct {
		Ref      map[string]string `json:"ref"`
		Action   string            `json:"action"`
		Message  string            `json:"message"`
		Verified string            `json:"verified"`
		Risks    []struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"risks"`
		Policy []struct {
			Rule    string `json:"rule"`
			Level   string `json:"level"`
			Message string `json:"message"`
		} `json:"policy"`
	} `json:"changes"`
}

// refString names a change's object for a test message.
func refString(ref map[string]string) string {
	s := ref["kind"] + " " + ref["name"]
	if ref["namespace"] != "" {
		s += " -n " + ref["namespace"]
	}
	return s
}

// planReal runs `snapply plan -o json --detailed-exitcode` for the
// inventory inv and returns the plan, the run and how long it took.
func planReal(t *testing.T, dir, db, inv string, extra ...string) (realPlan, result, time.Duration) {
	t.Helper()
	start := time.Now()
	args := append([]string{"plan", dir, "--store", db, "--name", inv, "--inventory-namespace", inv, "-o", "json", "--detailed-exitcode"}, extra...)
	r := snapply(t, args...)
	took := time.Since(start)
	var p realPlan
	if r.code == 1 || json.Unmarshal([]byte(r.stdout), &p) != nil {
		t.Fatalf("plan: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	return p, r, took
}

// gitRepo copies the directory dir of a Go module into a new directory
// that looks like a git repository (kustomize reads `../` bases only
// inside the repository) and returns the repository.
func gitRepo(t *testing.T, module, dir string) string {
	t.Helper()
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.CopyTree(t, filepath.Join(testenv.ModuleDir(t, module), dir), filepath.Join(repo, dir))
	return repo
}

// TestRealKustomizeMetricsServer renders, plans and applies the kustomize
// tree metrics-server publishes (manifests/overlays/release of its Go
// module) as it is: nine objects in kube-system and cluster-wide, an
// APIService, RBAC bound to the API server's bootstrap roles, an image
// rewritten by a kustomize component. A second plan finds nothing to do,
// although the APIService's backend never runs here (its discovery fails).
func TestRealKustomizeMetricsServer(t *testing.T) {
	repo := gitRepo(t, "sigs.k8s.io/metrics-server@v0.7.2", "manifests")
	dir := filepath.Join(repo, "manifests", "overlays", "release")
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	const image = "registry.k8s.io/metrics-server/metrics-server:v0.7.2"
	// The tree's objects are outside the test's namespace: prune them,
	// and remove the APIService whatever happens, as its discovery fails
	// for every client while it is there.
	t.Cleanup(func() {
		pruneAll(t, ns, db, "")
		deleteIfThere(t, schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}, "", "v1beta1.metrics.k8s.io")
	})

	r := snapply(t, "render", dir)
	if r.code != 0 {
		t.Fatalf("render: exit %d\n%s", r.code, r.stderr)
	}
	if n := strings.Count(r.stdout, "\nkind: "); n != 9 || !strings.Contains(r.stdout, "image: "+image) || !strings.Contains(r.stdout, "k8s-app: metrics-server") {
		t.Errorf("render: %d objects, want 9, with the image %s and the label k8s-app:\n%s", n, image, r.stdout)
	}

	p, r, took := planReal(t, dir, db, ns)
	t.Logf("plan of %d objects: %v", len(p.Changes), took)
	if r.code != 2 || len(p.Changes) != 9 || p.Summary["create"] != 9 {
		t.Errorf("plan: exit %d, summary %v, want 9 creates and exit 2", r.code, p.Summary)
	}
	for _, c := range p.Changes {
		if c.Action != "create" || len(c.Risks) > 0 {
			t.Errorf("%s: %s %s, risks %v", refString(c.Ref), c.Action, c.Message, c.Risks)
		}
	}

	start := time.Now()
	if r := applyIn(t, ns, db, dir, "--wait=false"); r.code != 0 || !strings.Contains(r.stdout, "Apply: 9 applied") {
		t.Fatalf("apply: exit %d, want 9 applied\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("apply of 9 objects: %v", time.Since(start))
	d, err := clientset(t).AppsV1().Deployments("kube-system").Get(context.Background(), "metrics-server", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Deployment is not in the cluster: %v", err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
		t.Errorf("image %s, want %s", got, image)
	}

	// The APIService is there, its backend is not: once the API server
	// finds it unavailable, its discovery of metrics.k8s.io fails.
	waitCondition(t, schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}, "v1beta1.metrics.k8s.io", "Available", "False")
	p, r, took = planReal(t, dir, db, ns)
	t.Logf("second plan: %v", took)
	if r.code != 0 || p.Summary["unchanged"] != 9 {
		t.Errorf("second plan: exit %d, summary %v, want 9 unchanged and exit 0", r.code, p.Summary)
	}
	// The plan says what it could not read.
	if want := "snapshot: skipped metrics.k8s.io/v1beta1: discovery failed"; !strings.Contains(r.stderr, want) {
		t.Errorf("second plan: stderr does not say %q:\n%s", want, r.stderr)
	}
	for _, c := range p.Changes {
		if c.Action != "unchanged" || len(c.Risks) > 0 {
			t.Errorf("second plan: %s: %s %s, risks %v", refString(c.Ref), c.Action, c.Message, c.Risks)
		}
	}
}

// deleteIfThere deletes an object, if it exists.
func deleteIfThere(t *testing.T, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	dc, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := dc.Resource(gvr).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete %s %s: %v", gvr.Resource, name, err)
	}
}

// realResult is the part of the JSON apply result the real-world tests
// read.
type realResult struct {
	Summary map[string]int `json:"summary"`
	Records []struct {
		Ref       map[string]string `json:"ref"`
		Outcome   string            `json:"outcome"`
		Wave      string            `json:"wave"`
		Readiness string            `json:"readiness"`
		Error     string            `json:"error"`
	} `json:"records"`
	OK bool `json:"ok"`
}

// applyReal runs `snapply apply -o json` (with its wait) for the inventory
// ns and returns the result and how long it took.
func applyReal(t *testing.T, ns, db, dir string, extra ...string) (realResult, time.Duration) {
	t.Helper()
	start := time.Now()
	r := applyIn(t, ns, db, dir, append([]string{"-o", "json"}, extra...)...)
	took := time.Since(start)
	var res realResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil {
		t.Fatalf("apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	return res, took
}

// pruneAll deletes what the inventory ns applied, CRDs included, and
// waits until no CRD of group is left: a CRD is deleted once its custom
// resources are.
func pruneAll(t *testing.T, ns, db, group string) {
	t.Helper()
	if r := applyIn(t, ns, db, manifests(t, ns, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: left, namespace: NS}\n"}), "--wait=false", "--allow-destructive"); r.code != 0 {
		t.Errorf("prune: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if group == "" {
		return
	}
	dc, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := dc.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	// The API server finalizes a deleted CRD (its instances, its storage)
	// on its own time: seconds, but over 30 s on a loaded 2-core machine.
	// The next test of the group must not meet a terminating CRD.
	start := time.Now()
	for deadline := start.Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		list, err := crds.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, c := range list.Items {
			if g, _, _ := unstructured.NestedString(c.Object, "spec", "group"); g == group {
				left = append(left, c.GetName())
			}
		}
		if len(left) == 0 {
			t.Logf("CRDs of %s gone %s after the prune", group, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRDs still there %s after the prune: %v", time.Since(start).Round(time.Second), left)
		}
	}
}

// gatewayAPI is the Go module that publishes Gateway API's CRDs and
// examples.
const gatewayAPI = "sigs.k8s.io/gateway-api@v1.6.3"

// TestRealGatewayAPICRDs plans and applies Gateway API's CRDs kustomization
// (config/crd of its Go module: the standard channel's ten CRDs and the
// ValidatingAdmissionPolicy, with its binding, that guards their upgrades),
// waits until the CRDs are Established, and plans again: nothing to do.
func TestRealGatewayAPICRDs(t *testing.T) {
	repo := gitRepo(t, gatewayAPI, "config/crd")
	dir := filepath.Join(repo, "config", "crd")
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	t.Cleanup(func() { pruneAll(t, ns, db, "gateway.networking.k8s.io") })

	p, r, took := planReal(t, dir, db, ns)
	t.Logf("plan of %d objects: %v", len(p.Changes), took)
	crds := 0
	for _, c := range p.Changes {
		if c.Ref["kind"] == "CustomResourceDefinition" {
			crds++
		}
		if c.Action != "create" || len(c.Risks) > 0 {
			t.Errorf("%s: %s %s, risks %v", refString(c.Ref), c.Action, c.Message, c.Risks)
		}
	}
	if r.code != 2 || crds != 10 || len(p.Changes) != 12 {
		t.Fatalf("plan: exit %d, %d objects of which %d CRDs, want exit 2, 12 objects (10 CRDs, a policy and its binding)", r.code, len(p.Changes), crds)
	}

	res, took := applyReal(t, ns, db, dir)
	t.Logf("apply of %d objects, with the wait: %v", len(res.Records), took)
	waves := map[string]string{"CustomResourceDefinition": "definitions", "ValidatingAdmissionPolicy": "webhooks", "ValidatingAdmissionPolicyBinding": "webhooks"}
	for _, rec := range res.Records {
		if rec.Outcome != "applied" || rec.Readiness != "Current" || rec.Wave != waves[rec.Ref["kind"]] {
			t.Errorf("%s: %s in wave %s, readiness %q %s", refString(rec.Ref), rec.Outcome, rec.Wave, rec.Readiness, rec.Error)
		}
	}
	if !res.OK || res.Summary["applied"] != 12 {
		t.Errorf("apply: ok %v, summary %v, want 12 applied", res.OK, res.Summary)
	}
	checkEstablished(t, "gateway.networking.k8s.io", 10)

	p, r, took = planReal(t, dir, db, ns)
	t.Logf("second plan: %v", took)
	if r.code != 0 || p.Summary["unchanged"] != 12 {
		t.Errorf("second plan: exit %d, summary %v, want 12 unchanged and exit 0", r.code, p.Summary)
	}

	// The experimental channel over the standard one: the policy the
	// standard channel installed refuses it, and the plan says so for
	// each CRD it would change, naming the policy.
	r = snapply(t, "plan", filepath.Join(dir, "experimental"), "--store", db, "--name", ns, "--inventory-namespace", ns, "-o", "json", "--detailed-exitcode")
	var exp realPlan
	if err := json.Unmarshal([]byte(r.stdout), &exp); err != nil || r.code != 1 {
		t.Fatalf("plan of the experimental channel: exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	const denied = "Installing experimental CRDs on top of standard channel CRDs is prohibited"
	for _, c := range exp.Changes {
		guarded := c.Ref["kind"] == "CustomResourceDefinition" && strings.HasSuffix(c.Ref["name"], ".gateway.networking.k8s.io")
		switch {
		case guarded && (c.Action != "invalid" || !strings.Contains(c.Message, denied) ||
			len(c.Policy) != 1 || c.Policy[0].Level != "deny" || !strings.Contains(c.Policy[0].Rule, "safe-upgrades.gateway.networking.k8s.io")):
			t.Errorf("experimental channel: %s: %s %q, policy %+v; want invalid, denied by safe-upgrades.gateway.networking.k8s.io", refString(c.Ref), c.Action, c.Message, c.Policy)
		case !guarded && c.Action == "invalid":
			t.Errorf("experimental channel: %s: invalid: %s", refString(c.Ref), c.Message)
		}
	}
	if exp.Summary["invalid"] != 10 {
		t.Errorf("experimental channel: summary %v, want 10 invalid", exp.Summary)
	}
}

// checkEstablished checks that want CRDs of group are Established.
func checkEstablished(t *testing.T, group string, want int) {
	t.Helper()
	dc, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	list, err := dc.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	established := 0
	for _, c := range list.Items {
		if g, _, _ := unstructured.NestedString(c.Object, "spec", "group"); g != group {
			continue
		}
		conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
		for _, cond := range conds {
			if m, _ := cond.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				established++
			}
		}
	}
	if established != want {
		t.Errorf("%d CRDs of %s Established, want %d", established, group, want)
	}
}

// TestRealGatewayAPIWithResources applies, in one run, a kustomization
// that holds Gateway API's CRDs kustomization and one of the module's own
// examples (examples/standard/basic-http.yaml: a GatewayClass, a Gateway
// and an HTTPRoute) under `namespace:`, to a cluster without the CRDs.
// Kustomize sets that namespace on the cluster-scoped GatewayClass too (it
// cannot know the scope of a custom kind): the plan drops it, as the API
// server would. The plan cannot dry-run the custom resources and says they
// are pending on CRDs of the same plan; the apply creates the CRDs first
// (their wave is waited for until they are Established), then the custom
// resources. A second plan finds nothing to do.
func TestRealGatewayAPIWithResources(t *testing.T) {
	mod := testenv.ModuleDir(t, gatewayAPI)
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(repo, "deploy")
	testenv.CopyTree(t, filepath.Join(mod, "config", "crd"), filepath.Join(dir, "crds"))
	example, err := os.ReadFile(filepath.Join(mod, "examples", "standard", "basic-http.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	for name, content := range map[string]string{"basic-http.yaml": string(example), "kustomization.yaml": "namespace: " + ns + "\nresources: [crds, basic-http.yaml]\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(t.TempDir(), "s.db")
	t.Cleanup(func() { pruneAll(t, ns, db, "gateway.networking.k8s.io") })

	p, r, took := planReal(t, dir, db, ns)
	t.Logf("plan of %d objects: %v", len(p.Changes), took)
	want := map[string]string{ // kind -> action, namespace
		"GatewayClass": "pending ", "Gateway": "pending " + ns, "HTTPRoute": "pending " + ns,
		"CustomResourceDefinition": "create ", "ValidatingAdmissionPolicy": "create ", "ValidatingAdmissionPolicyBinding": "create ",
	}
	// The example routes to Services it does not ship (my-service1 and
	// my-service2): true broken references, and the only risks. Its
	// parent, the Gateway, is in the set.
	wantRisks := map[string][]string{"HTTPRoute": {
		"broken-ref httproute.gateway.networking.k8s.io/http-app-1 -n " + ns + " (spec.rules[0].backendRefs[name=my-service1]) -> service/my-service1 -n " + ns + ": does not exist",
		"broken-ref httproute.gateway.networking.k8s.io/http-app-1 -n " + ns + " (spec.rules[1].backendRefs[name=my-service2]) -> service/my-service2 -n " + ns + ": does not exist",
	}}
	for _, c := range p.Changes {
		var risks []string
		for _, r := range c.Risks {
			risks = append(risks, r.Kind+" "+r.Message)
		}
		if got := c.Action + " " + c.Ref["namespace"]; got != want[c.Ref["kind"]] || !slices.Equal(risks, wantRisks[c.Ref["kind"]]) {
			t.Errorf("%s: %s, want %s; risks %q, want %q", refString(c.Ref), got, want[c.Ref["kind"]], risks, wantRisks[c.Ref["kind"]])
		}
		if c.Action == "pending" && !strings.Contains(c.Message, "CustomResourceDefinition is created by this plan") {
			t.Errorf("%s: pending because %q", refString(c.Ref), c.Message)
		}
	}
	if r.code != 2 || p.Summary["pending"] != 3 || p.Summary["create"] != 12 {
		t.Fatalf("plan: exit %d, summary %v, want exit 2, 12 creates and 3 pending", r.code, p.Summary)
	}

	res, took := applyReal(t, ns, db, dir)
	t.Logf("apply of %d objects, with the wait: %v", len(res.Records), took)
	waves := map[string]string{"CustomResourceDefinition": "definitions", "ValidatingAdmissionPolicy": "webhooks", "ValidatingAdmissionPolicyBinding": "webhooks"}
	for _, rec := range res.Records {
		wave := waves[rec.Ref["kind"]]
		if wave == "" {
			wave = "workloads"
		}
		if rec.Outcome != "applied" || rec.Readiness != "Current" || rec.Wave != wave {
			t.Errorf("%s: %s in wave %s (want %s), readiness %q %s", refString(rec.Ref), rec.Outcome, rec.Wave, wave, rec.Readiness, rec.Error)
		}
	}
	if !res.OK || res.Summary["applied"] != 15 {
		t.Errorf("apply: ok %v, summary %v, want 15 applied", res.OK, res.Summary)
	}
	dc, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := dc.Resource(schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}).Namespace(ns).Get(context.Background(), "my-gateway", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Gateway is not in the cluster: %v", err)
	}
	if class, _, _ := unstructured.NestedString(gw.Object, "spec", "gatewayClassName"); class != "example" {
		t.Errorf("Gateway class %q, want example", class)
	}
	if _, err := dc.Resource(schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}).Get(context.Background(), "example", metav1.GetOptions{}); err != nil {
		t.Errorf("the cluster-scoped GatewayClass is not in the cluster: %v", err)
	}

	p, r, took = planReal(t, dir, db, ns)
	t.Logf("second plan: %v", took)
	if r.code != 0 || p.Summary["unchanged"] != 15 {
		t.Errorf("second plan: exit %d, summary %v, want 15 unchanged and exit 0", r.code, p.Summary)
	}
}

// waitCondition waits until the cluster-scoped object name has the
// condition typ with status.
func waitCondition(t *testing.T, gvr schema.GroupVersionResource, name, typ, status string) {
	t.Helper()
	dc, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		u, err := dc.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == typ && m["status"] == status {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: no condition %s=%s after 20s: %v", gvr.Resource, name, typ, status, conds)
		}
	}
}
