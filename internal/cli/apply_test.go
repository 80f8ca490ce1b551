package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/store"
)

func clientset(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// applyIn runs `snapply apply` with an inventory of its own in ns.
func applyIn(t *testing.T, ns, db, dir string, extra ...string) result {
	t.Helper()
	args := append([]string{"apply", dir, "--store", db, "--name", ns, "--inventory-namespace", ns, "--color=never"}, extra...)
	return snapply(t, args...)
}

const configMaps = `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: NS}
data: {k: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: NS}
data: {k: "2"}
`

func resourceVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	cms, err := clientset(t).CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: apply.PartOfLabel})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, cm := range cms.Items {
		out[cm.Name] = cm.ResourceVersion
	}
	return out
}

func TestApplyIsIdempotent(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	dir := manifests(t, ns, map[string]string{"cm.yaml": configMaps})

	r := applyIn(t, ns, db, dir)
	if r.code != 0 || !strings.Contains(r.stdout, "Apply: 2 applied") {
		t.Fatalf("first apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	before := resourceVersions(t, ns)
	if len(before) != 2 {
		t.Fatalf("members carrying the ApplySet label: %v", before)
	}
	r = applyIn(t, ns, db, dir)
	if r.code != 0 || !strings.Contains(r.stdout, "Apply: 0 applied, 2 unchanged") {
		t.Fatalf("second apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if after := resourceVersions(t, ns); after["a"] != before["a"] || after["b"] != before["b"] {
		t.Errorf("second apply wrote objects: resourceVersions %v -> %v", before, after)
	}

	// Both runs are recorded, one record per object, with object IDs.
	s, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs recorded, want 2", len(runs))
	}
	for _, rec := range runs[0].Records {
		if rec.Outcome != "applied" || rec.AfterID == (store.ID{}) || rec.BeforeID != (store.ID{}) {
			t.Errorf("first run record %+v", rec)
		}
	}
	for _, rec := range runs[1].Records {
		if rec.Outcome != "unchanged" || rec.BeforeID != rec.AfterID {
			t.Errorf("second run record %+v", rec)
		}
	}
}

func TestApplyCRDAndNamespaceInOneSet(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	dir := manifests(t, ns, map[string]string{"all.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.NS.example.com}
spec:
  group: NS.example.com
  scope: Namespaced
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: NS.example.com/v1
kind: Gadget
metadata: {name: g1, namespace: NS-apps}
spec: {size: 3}
---
apiVersion: v1
kind: Namespace
metadata: {name: NS-apps}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: inside, namespace: NS-apps}
data: {a: b}
`})
	t.Cleanup(func() {
		cs := clientset(t)
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns+"-apps", metav1.DeleteOptions{})
	})
	r := applyIn(t, ns, db, dir)
	if r.code != 0 || !strings.Contains(r.stdout, "Apply: 4 applied") {
		t.Fatalf("apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	c, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.Dynamic.Resource(schema.GroupVersionResource{Group: ns + ".example.com", Version: "v1", Resource: "gadgets"}).Namespace(ns+"-apps").Get(context.Background(), "g1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("custom resource not created: %v", err)
	}
	if g.GetLabels()[apply.PartOfLabel] == "" {
		t.Error("custom resource lacks the ApplySet label")
	}
	if r := applyIn(t, ns, db, dir); r.code != 0 || !strings.Contains(r.stdout, "0 applied, 4 unchanged") {
		t.Fatalf("second apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestApplyPrunesOnlyItsOwn(t *testing.T) {
	ns := env.Namespace(t)
	other := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	cs := clientset(t)
	ctx := context.Background()

	if r := applyIn(t, ns, db, manifests(t, ns, map[string]string{"cm.yaml": configMaps})); r.code != 0 {
		t.Fatalf("apply: %s%s", r.stdout, r.stderr)
	}
	// An object with the same name as a member, elsewhere, without our label.
	if _, err := cs.CoreV1().ConfigMaps(other).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	onlyA := manifests(t, ns, map[string]string{"cm.yaml": strings.Split(configMaps, "---\n")[0]})
	r := snapply(t, "plan", onlyA, "--store", db, "--name", ns, "--inventory-namespace", ns, "-o", "json", "-q")
	if r.code != 0 || !strings.Contains(r.stdout, `"delete": 1`) {
		t.Fatalf("plan does not show the delete: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = applyIn(t, ns, db, onlyA)
	if r.code != 0 || !strings.Contains(r.stdout, "1 pruned") {
		t.Fatalf("apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pruned member still there: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps(other).Get(ctx, "b", metav1.GetOptions{}); err != nil {
		t.Errorf("prune touched an object without our label: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Errorf("kept member gone: %v", err)
	}
}

func TestApplyRefusesDestructivePrune(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	withNS := manifests(t, ns, map[string]string{"ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: NS-gone}\n", "cm.yaml": strings.Split(configMaps, "---\n")[0]})
	if r := applyIn(t, ns, db, withNS); r.code != 0 {
		t.Fatalf("apply: %s%s", r.stdout, r.stderr)
	}
	without := manifests(t, ns, map[string]string{"cm.yaml": strings.Split(configMaps, "---\n")[0]})

	r := snapply(t, "plan", without, "--store", db, "--name", ns, "--inventory-namespace", ns, "-q")
	if !strings.Contains(r.stdout, "namespace/"+ns+"-gone") || !strings.Contains(r.stdout, "DESTRUCTIVE") {
		t.Errorf("plan does not mark the namespace delete destructive:\n%s", r.stdout)
	}
	r = applyIn(t, ns, db, without)
	if r.code != 1 || !strings.Contains(r.stderr, "--allow-destructive") {
		t.Fatalf("apply: exit %d, want 1 naming --allow-destructive\n%s%s", r.code, r.stdout, r.stderr)
	}
	ctx := context.Background()
	if _, err := clientset(t).CoreV1().Namespaces().Get(ctx, ns+"-gone", metav1.GetOptions{}); err != nil {
		t.Fatalf("refused apply still deleted the namespace: %v", err)
	}
	r = applyIn(t, ns, db, without, "--allow-destructive")
	if r.code != 0 || !strings.Contains(r.stdout, "1 pruned") {
		t.Fatalf("apply --allow-destructive: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	n, err := clientset(t).CoreV1().Namespaces().Get(ctx, ns+"-gone", metav1.GetOptions{})
	if err == nil && n.DeletionTimestamp == nil {
		t.Error("namespace not deleted with --allow-destructive")
	}
}

func TestApplyConflict(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	ctx := context.Background()
	cs := clientset(t)
	if r := applyIn(t, ns, db, manifests(t, ns, map[string]string{"cm.yaml": configMaps})); r.code != 0 {
		t.Fatalf("apply: %s%s", r.stdout, r.stderr)
	}
	// Someone edits the value by hand (an update, as kubectl edit does).
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "by-hand"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}

	changed := strings.Replace(strings.Replace(configMaps, `k: "1"`, `k: "from-git"`, 1), `k: "2"`, `k: "3"`, 1)
	r := applyIn(t, ns, db, manifests(t, ns, map[string]string{"cm.yaml": changed}))
	if r.code != 1 {
		t.Fatalf("apply with a conflict: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{".data.k", "kubectl-edit", "snapply.dev/force-conflicts", "--force-conflicts", "1 applied", "1 not attempted"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("result lacks %q:\n%s", want, r.stdout)
		}
	}
	got, _ := cs.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{})
	if got.Data["k"] != "by-hand" {
		t.Errorf("conflicting field overwritten without force: %q", got.Data["k"])
	}
	if b, _ := cs.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{}); b.Data["k"] != "3" {
		t.Errorf("the object without conflict was not applied: %q", b.Data["k"])
	}

	forced := strings.Replace(changed, "metadata: {name: a, namespace: NS}", "metadata: {name: a, namespace: NS, annotations: {snapply.dev/force-conflicts: \"true\"}}", 1)
	if r := applyIn(t, ns, db, manifests(t, ns, map[string]string{"cm.yaml": forced})); r.code != 0 {
		t.Fatalf("forced apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got, _ := cs.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{}); got.Data["k"] != "from-git" {
		t.Errorf("forced apply did not take the field: %q", got.Data["k"])
	}
}

func TestApplyWaitsForTheLock(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	dir := manifests(t, ns, map[string]string{"cm.yaml": configMaps})
	c, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	opts := apply.DefaultLockOptions()
	opts.Holder = "https://github.com/o/r/actions/runs/42"
	lock, err := apply.Acquire(context.Background(), c, ns, ns, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := applyIn(t, ns, db, dir, "--timeout", "2s")
	if r.code != 1 || !strings.Contains(r.stderr, "held by https://github.com/o/r/actions/runs/42") {
		t.Fatalf("apply while locked: exit %d, want 1 naming the holder\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := resourceVersions(t, ns); len(got) != 0 {
		t.Errorf("apply wrote objects without the lock: %v", got)
	}

	// Released while a second apply waits: that apply goes through.
	done := make(chan result)
	waiting := newWatchWriter("is held by https://github.com/o/r/actions/runs/42: waiting")
	go func() {
		done <- runWatched(context.Background(), waiting, "apply", dir, "--store", db, "--name", ns, "--inventory-namespace", ns, "--timeout", "30s")
	}()
	select {
	case <-waiting.seen: // the second apply is waiting for the lock
	case r := <-done:
		t.Fatalf("apply did not wait for the lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.code != 0 {
		t.Fatalf("apply after release: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestApplyConcurrentRunsSerialise(t *testing.T) {
	ns := env.Namespace(t)
	dir := manifests(t, ns, map[string]string{"cm.yaml": configMaps})
	const n = 3
	results := make(chan result, n)
	for i := range n {
		db := filepath.Join(t.TempDir(), "s.db")
		_ = i
		go func() { results <- applyIn(t, ns, db, dir, "--timeout", "60s") }()
	}
	applied := 0
	for range n {
		r := <-results
		if r.code != 0 {
			t.Fatalf("concurrent apply failed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "Apply: 2 applied") {
			applied++
		}
	}
	// Serialised: the first one creates, the others find nothing to do.
	if applied != 1 {
		t.Errorf("%d runs applied the objects, want exactly 1 (the others must plan after it)", applied)
	}
}

func TestApplyReadinessTimeout(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	// No controllers run beside this API server: the Deployment never
	// becomes available.
	r := applyIn(t, ns, db, manifests(t, ns, map[string]string{"app.yaml": webApp}), "--timeout", "3s")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"deployment.apps/web -n " + ns + " (applied, InProgress", "configmap/settings -n " + ns + " (applied, Current)", "1 not ready"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("result lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestApplyPartialFailureRecordsEveryObject(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	// The custom resource is pending at plan time (its CRD is in the same
	// set) and is refused by the server only when applied, mid-wave.
	dir := manifests(t, ns, map[string]string{"all.yaml": configMaps + `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: sizes.NS.example.com}
spec:
  group: NS.example.com
  scope: Namespaced
  names: {kind: Size, plural: sizes, singular: size, listKind: SizeList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
---
apiVersion: NS.example.com/v1
kind: Size
metadata: {name: broken, namespace: NS}
spec: {size: "three"}
`})
	r := applyIn(t, ns, db, dir, "-o", "json")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{`"applied": 3`, `"failed": 1`, "spec.size"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("result lacks %q:\n%s", want, r.stdout)
		}
	}
	s, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs()
	if err != nil || len(runs) != 1 || len(runs[0].Records) != 4 {
		t.Fatalf("runs %v err %v, want one run with 4 records", runs, err)
	}
}

func TestApplyInterrupted(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	ctx, cancel := context.WithCancel(context.Background())
	// The Deployment never becomes ready: cancel once the wait reports.
	waiting := newWatchWriter("waiting for deployment.apps/web")
	go func() {
		<-waiting.seen
		cancel()
	}()
	defer cancel()
	r := runWatched(ctx, waiting, "apply", manifests(t, ns, map[string]string{"app.yaml": webApp}), "--store", db, "--name", ns, "--inventory-namespace", ns, "--timeout", "60s", "--color=never")
	if r.code != 1 || !strings.Contains(r.stdout, "Interrupted") {
		t.Fatalf("exit %d, want 1 and an interrupted result\n%s%s", r.code, r.stdout, r.stderr)
	}
	s, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs()
	s.Close()
	if err != nil || len(runs) != 1 || !runs[0].Interrupted || len(runs[0].Records) != 2 {
		t.Fatalf("runs %+v err %v, want one interrupted run with 2 records", runs, err)
	}
	c, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	opts := apply.DefaultLockOptions()
	opts.Wait = 0
	lock, err := apply.Acquire(context.Background(), c, ns, ns, opts)
	if err != nil {
		t.Fatalf("the interrupted apply did not release the lock: %v", err)
	}
	_ = lock.Release()
}
