package cli_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/store"
)

// The application in its first version: a ConfigMap and a Deployment that
// v2 changes, one ConfigMap that v2 keeps as it is, one that v2 removes.
var rbV1 = map[string]string{
	"settings.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS, labels: {app: demo}}
data: {color: blue, size: "1"}
`,
	"web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27.0
        env: [{name: LEVEL, value: info}]
`,
	"stable.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: stable, namespace: NS}
data: {x: "1"}
`,
	"removed.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: removed, namespace: NS}
data: {r: "1"}
`,
}

// rbV2 changes settings and web, adds added, removes removed.
var rbV2 = map[string]string{
	"settings.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS, labels: {app: demo}}
data: {color: red, size: "1"}
`,
	"web.yaml": `apiVersion: apps/v1
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
        image: nginx:1.27.3
        env: [{name: LEVEL, value: debug}]
`,
	"stable.yaml": rbV1["stable.yaml"],
	"added.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: added, namespace: NS}
data: {num: "1"}
`,
}

var rbGVR = map[string]schema.GroupVersionResource{
	"ConfigMap":  {Version: "v1", Resource: "configmaps"},
	"Deployment": {Group: "apps", Version: "v1", Resource: "deployments"},
	"Secret":     {Version: "v1", Resource: "secrets"},
}

// rbLive returns the live object, or nil when it does not exist.
func rbLive(t *testing.T, ns, kind, name string) *unstructured.Unstructured {
	t.Helper()
	dc, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	u, err := dc.Resource(rbGVR[kind]).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// rbMismatches compares, field by field, what the manifest want sets with
// the live object got; it returns the fields that differ.
func rbMismatches(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want a map, got %v", path, got)}
		}
		var out []string
		for k, v := range w {
			out = append(out, rbMismatches(path+"."+k, v, g[k])...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %d items, got %v", path, len(w), got)}
		}
		var out []string
		for i := range w {
			out = append(out, rbMismatches(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	}
	if fmt.Sprint(want) != fmt.Sprint(got) {
		return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
	}
	return nil
}

// rbCheckState checks that the namespace holds exactly the managed
// objects of the manifests, each as they set it.
func rbCheckState(t *testing.T, ns string, files map[string]string, absent ...string) {
	t.Helper()
	for name, text := range files {
		want := map[string]any{}
		if err := yaml.Unmarshal([]byte(strings.ReplaceAll(text, "NS", ns)), &want); err != nil {
			t.Fatal(err)
		}
		kind := want["kind"].(string)
		objName := want["metadata"].(map[string]any)["name"].(string)
		live := rbLive(t, ns, kind, objName)
		if live == nil {
			t.Errorf("%s (%s): not live", objName, name)
			continue
		}
		if kind == "Secret" {
			continue // compared by the Secret test, in base64
		}
		for _, m := range rbMismatches(kind+"/"+objName, want, live.Object) {
			t.Errorf("%s", m)
		}
	}
	for _, name := range absent {
		if rbLive(t, ns, "ConfigMap", name) != nil {
			t.Errorf("configmap/%s is live, want it pruned", name)
		}
	}
}

// rbRuns returns the runs recorded in the store file.
func rbRuns(t *testing.T, db string) []store.Run {
	t.Helper()
	s, err := engine.OpenStore(db, true, engine.StoreKey{}, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// rbSetup applies v1 and v2 and returns the store and the two runs.
func rbSetup(t *testing.T, ns string, v1, v2 map[string]string) (db string, run1, run2 store.Run) {
	t.Helper()
	db = filepath.Join(t.TempDir(), "s.db")
	for i, files := range []map[string]string{v1, v2} {
		if r := applyIn(t, ns, db, manifests(t, ns, files), "--wait=false"); r.code != 0 {
			t.Fatalf("apply v%d: exit %d\n%s%s", i+1, r.code, r.stdout, r.stderr)
		}
	}
	runs := rbRuns(t, db)
	if len(runs) != 2 {
		t.Fatalf("%d runs recorded, want 2", len(runs))
	}
	return db, runs[0], runs[1]
}

// rollbackIn runs `snapply rollback` against the inventory of ns.
func rollbackIn(t *testing.T, ns, db string, extra ...string) result {
	t.Helper()
	args := append([]string{"rollback", "--store", db, "--name", ns, "--inventory-namespace", ns, "--color=never", "--wait=false"}, extra...)
	return snapply(t, args...)
}

func TestRollbackToDesired(t *testing.T) {
	ns := env.Namespace(t)
	db, run1, _ := rbSetup(t, ns, rbV1, rbV2)
	rbCheckState(t, ns, rbV2, "removed")

	// A dry run plans the rollback and changes nothing.
	before := resourceVersions(t, ns)
	r := rollbackIn(t, ns, db, "--to", run1.After, "--dry-run")
	if r.code != 0 {
		t.Fatalf("rollback --dry-run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"update", "create", "delete", "configmap/removed -n " + ns, "configmap/added -n " + ns} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the dry run's plan does not mention %q:\n%s", want, r.stdout)
		}
	}
	if after := resourceVersions(t, ns); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the dry run changed objects: resourceVersions %v -> %v", before, after)
	}
	rbCheckState(t, ns, rbV2, "removed")

	// The rollback, to a prefix of v1's after snapshot: v1's desired state.
	r = rollbackIn(t, ns, db, "--to", run1.After[:len(run1.After)-1])
	if r.code != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if want := "Rollback to snapshot " + run1.Desired + " (state desired; run of "; !strings.HasPrefix(r.stderr, want) {
		t.Errorf("stderr does not start with %q:\n%s", want, r.stderr)
	}
	if !strings.Contains(r.stdout, "Apply: ") {
		t.Errorf("no apply result on stdout:\n%s", r.stdout)
	}
	rbCheckState(t, ns, rbV1, "added")

	// The rollback is a run of its own, whose snapshots name what they
	// restore.
	runs := rbRuns(t, db)
	if len(runs) != 3 {
		t.Fatalf("%d runs recorded, want 3", len(runs))
	}
	s, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range []string{runs[2].Before, runs[2].Desired, runs[2].After} {
		snap, err := s.Snapshot(id)
		if err != nil {
			t.Fatal(err)
		}
		if snap.Meta.Source.Restores != run1.Desired {
			t.Errorf("snapshot %s (%s): Source.Restores = %q, want %q", id, snap.Meta.Kind, snap.Meta.Source.Restores, run1.Desired)
		}
	}
}

func TestRollbackStateBefore(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	if r := applyIn(t, ns, db, manifests(t, ns, rbV1), "--wait=false"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Another manager adds a field between the two runs: it is not
	// snapply's, and the rollback leaves it.
	cm := rbLive(t, ns, "ConfigMap", "settings")
	unstructured.SetNestedField(cm.Object, "someone", "metadata", "annotations", "edited-by")
	dc, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Resource(rbGVR["ConfigMap"]).Namespace(ns).Update(context.Background(), cm, metav1.UpdateOptions{FieldManager: "kubectl-annotate"}); err != nil {
		t.Fatal(err)
	}
	if r := applyIn(t, ns, db, manifests(t, ns, rbV2), "--wait=false"); r.code != 0 {
		t.Fatalf("apply v2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	runs := rbRuns(t, db)
	run2 := runs[len(runs)-1]

	r := rollbackIn(t, ns, db, "--to", run2.Desired, "--state", "before")
	if r.code != 0 {
		t.Fatalf("rollback --state before: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if want := "Rollback to snapshot " + run2.Before + " (state before; "; !strings.HasPrefix(r.stderr, want) {
		t.Errorf("stderr does not start with %q:\n%s", want, r.stderr)
	}
	// Everything v2 changed is back as it was before it.
	rbCheckState(t, ns, rbV1, "added")
	if got := rbLive(t, ns, "ConfigMap", "settings").GetAnnotations()["edited-by"]; got != "someone" {
		t.Errorf("the other manager's annotation = %q, want it kept", got)
	}
}

func TestRollbackSecrets(t *testing.T) {
	secretV := func(value string) map[string]string {
		files := map[string]string{"stable.yaml": rbV1["stable.yaml"]}
		files["secret.yaml"] = `apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: NS}
stringData: {password: ` + value + `}
`
		return files
	}
	const v1Value, v2Value = "rb-s3cr3t-first-value", "rb-s3cr3t-second-value"
	tests := []struct {
		name     string
		key      string
		want     string // the password live after the rollback
		wantKept bool
	}{
		{name: "without a store key the Secret is left as it is live", want: v2Value, wantKept: true},
		{name: "with a store key the Secret is restored", key: "a passphrase for the rollback test", want: v1Value},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.key != "" {
				t.Setenv(store.KeyEnv, tt.key)
			} else {
				t.Setenv(store.KeyEnv, "")
			}
			ns := env.Namespace(t)
			db, run1, _ := rbSetup(t, ns, secretV(v1Value), secretV(v2Value))
			r := rollbackIn(t, ns, db, "--to", run1.Desired, "-o", "json")
			if r.code != 0 {
				t.Fatalf("rollback: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			kept := "secret/creds -n " + ns + ": values not in the store (no SNAPPLY_STORE_KEY when it was recorded): left as it is live"
			if got := strings.Contains(r.stderr, kept); got != tt.wantKept {
				t.Errorf("stderr says %q: %v, want %v:\n%s", kept, got, tt.wantKept, r.stderr)
			}
			live := rbLive(t, ns, "Secret", "creds")
			if live == nil {
				t.Fatal("secret/creds is not live: a kept Secret must not be pruned")
			}
			got, _, _ := unstructured.NestedString(live.Object, "data", "password")
			if want := base64.StdEncoding.EncodeToString([]byte(tt.want)); got != want {
				t.Errorf("live password (base64) = %q, want %q", got, want)
			}
			// The values never leave in clear: not in the outputs, not in
			// the store file.
			raw, err := os.ReadFile(db)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{v1Value, v2Value} {
				for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
					for where, text := range map[string]string{"output": r.stdout + r.stderr, "store file": string(raw)} {
						if strings.Contains(text, form) {
							t.Errorf("the %s holds the secret value %q", where, form)
						}
					}
				}
			}
		})
	}
}

func TestRollbackErrors(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	if r := snapply(t, "plan", manifests(t, ns, rbV1), "--store", db, "-q"); r.code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no --to", []string{"--store", db}, `required flag(s) "to" not set`},
		{"a store that does not exist", []string{"--store", filepath.Join(t.TempDir(), "none.db"), "--to", "latest"}, "no such file"},
		{"a store without runs", []string{"--store", db, "--to", "latest"}, "no recorded run"},
		{"an unknown state", []string{"--store", db, "--to", "latest", "--state", "after"}, `unknown state "after"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := snapply(t, append([]string{"rollback", "--name", ns, "--inventory-namespace", ns}, tt.args...)...)
			if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q", r.code, r.stderr, tt.want)
			}
		})
	}
}
