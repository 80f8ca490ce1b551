package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/snapply/snapply/internal/drift"
)

const driftApp = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS}
data: {mode: blue, size: "3"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: extra, namespace: NS}
data: {k: v}
`

// driftSetup applies driftApp in a namespace of its own and returns the
// namespace, the manifests and the drift command's arguments.
func driftSetup(t *testing.T) (string, string, []string) {
	t.Helper()
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	dir := manifests(t, ns, map[string]string{"app.yaml": driftApp})
	if r := applyIn(t, ns, db, dir, "--wait=false"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return ns, dir, []string{"drift", dir, "--store", db, "--name", ns, "--inventory-namespace", ns, "--color=never"}
}

func TestDriftInSyncExitsZero(t *testing.T) {
	_, _, args := driftSetup(t)
	r := snapply(t, args...)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "3 in sync") || !strings.Contains(r.stdout, "The cluster matches git.") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "snapshot: ") {
		t.Errorf("no snapshot written to the store:\n%s", r.stderr)
	}
}

func TestDriftNamesFieldManagerAndTime(t *testing.T) {
	ns, _, args := driftSetup(t)
	ctx := context.Background()
	deploys := clientset(t).AppsV1().Deployments(ns)
	d, err := deploys.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	five := int32(5)
	d.Spec.Replicas = &five
	if _, err := deploys.Update(ctx, d, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}

	r := snapply(t, args...)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := regexp.MustCompile(`spec\.replicas: git 2, live 5 \(kubectl-edit, 20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ\)`)
	if !want.MatchString(r.stdout) {
		t.Errorf("no line matching %s in:\n%s", want, r.stdout)
	}
	if !strings.Contains(r.stdout, "~ deployment.apps/web -n "+ns+" (drifted)") || !strings.Contains(r.stdout, "-  replicas: 5") {
		t.Errorf("no drifted block with the patch:\n%s", r.stdout)
	}
	// The patch that adopts the live value in git, to paste.
	adopt := "    adopt the live values in git: paste into the manifest (or a kustomize patch):\n" +
		"      apiVersion: apps/v1\n      kind: Deployment\n      metadata:\n        name: web\n        namespace: " + ns + "\n      spec:\n        replicas: 5\n"
	if !strings.Contains(r.stdout, adopt) {
		t.Errorf("no adopt patch %q in:\n%s", adopt, r.stdout)
	}

	// JSON: the same, machine-readable.
	r = snapply(t, append(args, "-o", "json")...)
	var rep drift.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, r.stdout)
	}
	if rep.Summary.Drifted != 1 || rep.Summary.InSync != 2 || len(rep.Objects) != 1 || rep.Snapshot == "" || rep.Inventory != ns+"/"+ns {
		t.Fatalf("report: %+v", rep)
	}
	f := rep.Objects[0].Fields
	if len(f) != 1 || f[0].Path != "spec.replicas" || f[0].Git != "2" || f[0].Live != "5" || f[0].Manager != "kubectl-edit" || f[0].Operation != "Update" || f[0].Time == "" {
		t.Errorf("fields: %+v", f)
	}
	if a := rep.Objects[0].Adopt; !strings.Contains(a, "spec:\n  replicas: 5\n") {
		t.Errorf("json adopt: %q", a)
	}
}

func TestDriftObjectDeletedOutOfBand(t *testing.T) {
	ns, _, args := driftSetup(t)
	if err := clientset(t).CoreV1().ConfigMaps(ns).Delete(context.Background(), "extra", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r := snapply(t, append(args, "-o", "markdown")...)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"| - | `configmap/extra -n " + ns + "` | missing |", "deleted out of band", "1 missing"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in:\n%s", want, r.stdout)
		}
	}
}

func TestDriftForceApplyTakesOwnership(t *testing.T) {
	ns, _, args := driftSetup(t)
	cm := corev1ac.ConfigMap("settings", ns).WithData(map[string]string{"mode": "green"})
	if _, err := clientset(t).CoreV1().ConfigMaps(ns).Apply(context.Background(), cm, metav1.ApplyOptions{FieldManager: "hotfix", Force: true}); err != nil {
		t.Fatal(err)
	}
	r := snapply(t, args...)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"data.mode: git blue, live green (hotfix, ",
		"data.mode: taken from snapply by hotfix with a force-apply",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "data.size") {
		t.Errorf("data.size is still snapply's and unchanged, yet reported:\n%s", r.stdout)
	}
}

func TestDriftOrphans(t *testing.T) {
	ns, _, args := driftSetup(t)
	stray := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: ns}, Data: map[string]string{"k": "v"}}
	if _, err := clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := snapply(t, args...); r.code != 0 || strings.Contains(r.stdout, "stray") {
		t.Fatalf("without --orphans: exit %d, want 0 and no orphan\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := snapply(t, append(args, "--orphans")...)
	if r.code != 2 || !strings.Contains(r.stdout, "+ configmap/stray -n "+ns+" (orphan)") {
		t.Fatalf("with --orphans: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, builtIn := range []string{"kube-root-ca.crt", "serviceaccount/default", "secret/" + ns} {
		if strings.Contains(r.stdout, builtIn) {
			t.Errorf("%s reported as an orphan:\n%s", builtIn, r.stdout)
		}
	}
}

func TestDriftWithoutInventoryFails(t *testing.T) {
	ns := env.Namespace(t)
	dir := manifests(t, ns, map[string]string{"app.yaml": driftApp})
	r := snapply(t, "drift", dir, "--store", filepath.Join(t.TempDir(), "s.db"), "--name", "never", "--inventory-namespace", ns)
	if r.code != 1 || !strings.Contains(r.stderr, "not found: nothing was applied under this name") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
