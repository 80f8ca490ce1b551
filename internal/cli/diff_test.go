package cli_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/store"
)

// obj parses one YAML object.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	return u
}

// storeOf writes one snapshot per set of objects into a new store file and
// returns its path and the snapshot IDs, in order.
func storeOf(t *testing.T, sets ...[]*unstructured.Unstructured) (string, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := store.Open(path, store.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, objs := range sets {
		m, err := db.PutSnapshot(context.Background(), store.Meta{Kind: store.Before}, objs)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path, ids
}

// diffJSON is the part of `snapply diff -o json` the tests compare.
type diffJSON struct {
	From    string         `json:"from"`
	To      string         `json:"to"`
	Summary map[string]int `json:"summary"`
	Changes []struct {
		Ref struct {
			Group, Version, Kind, Namespace, Name string
		} `json:"ref"`
		Change   string `json:"change"`
		Diff     string `json:"diff"`
		Managers []struct {
			Manager, Operation, Subresource, Time string
		} `json:"managers"`
	} `json:"changes"`
}

// brief is one change as the table tests state it.
type brief struct {
	Ref      string // Kind/namespace/name, or Kind/name
	Change   string
	Managers []string // manager/operation/time
}

func (d diffJSON) briefs() []brief {
	out := []brief{}
	for _, c := range d.Changes {
		ref := c.Ref.Kind + "/" + c.Ref.Name
		if c.Ref.Namespace != "" {
			ref = c.Ref.Kind + "/" + c.Ref.Namespace + "/" + c.Ref.Name
		}
		b := brief{Ref: ref, Change: c.Change, Managers: []string{}}
		for _, m := range c.Managers {
			b.Managers = append(b.Managers, m.Manager+"/"+m.Operation+"/"+m.Time)
		}
		out = append(out, b)
	}
	return out
}

func decodeDiff(t *testing.T, r result) diffJSON {
	t.Helper()
	var d diffJSON
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("diff -o json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	return d
}

// configMapA is ConfigMap ns/a as a snapshot of the live state holds it.
const configMapA = `apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: ns
  uid: 0b5d1d55-0000-4000-8000-000000000001
  creationTimestamp: "2026-11-21T08:00:00Z"
  resourceVersion: "100"
  managedFields:
  - {manager: snapply, operation: Apply, apiVersion: v1, time: "2026-11-21T09:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:k": {}}}}
data: {k: "1"}
`

func TestDiffSnapshots(t *testing.T) {
	// An edit changes a value and adds a managedFields entry.
	editedA := strings.NewReplacer(`k: "1"`, `k: "2"`, `resourceVersion: "100"`, `resourceVersion: "120"`).Replace(configMapA)
	editedA = strings.Replace(editedA, "  - {manager: snapply", `  - {manager: kubectl-edit, operation: Update, apiVersion: v1, time: "2026-11-21T10:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:k": {}}}}
  - {manager: snapply`, 1)
	reappliedA := strings.NewReplacer(`k: "1"`, `k: "3"`, `09:00:00Z`, `11:00:00Z`).Replace(configMapA)
	// The same object after writes that change no field snapply diffs: a new
	// resourceVersion, uid, a later managedFields time, a status.
	noiseA := strings.NewReplacer(`resourceVersion: "100"`, `resourceVersion: "130"`, `09:00:00Z`, `12:00:00Z`, `000000000001`, `000000000099`).Replace(configMapA) +
		"status: {phase: whatever}\n"
	secretA := `apiVersion: v1
kind: Secret
metadata: {name: a, namespace: ns}
type: Opaque
`
	widget := func(version string) string {
		return "apiVersion: example.com/" + version + "\nkind: Widget\nmetadata: {name: w}\nspec: {size: 3}\n"
	}

	tests := []struct {
		name       string
		from, to   []string
		summary    map[string]int
		changes    []brief
		diffsHave  []string
		diffsLack  []string
		exitCodeOn int
	}{{
		name:    "same objects",
		from:    []string{configMapA},
		to:      []string{configMapA},
		summary: map[string]int{"added": 0, "removed": 0, "changed": 0, "unchanged": 1},
		changes: []brief{},
	}, {
		name:       "a value edited by another manager",
		from:       []string{configMapA},
		to:         []string{editedA},
		summary:    map[string]int{"added": 0, "removed": 0, "changed": 1, "unchanged": 0},
		changes:    []brief{{Ref: "ConfigMap/ns/a", Change: "changed", Managers: []string{"kubectl-edit/Update/2026-11-21T10:00:00Z"}}},
		diffsHave:  []string{"-  k: \"1\"\n+  k: \"2\"\n"},
		diffsLack:  []string{"managedFields", "resourceVersion", "uid:", "creationTimestamp"},
		exitCodeOn: 1,
	}, {
		name:       "re-applied by the same manager, later",
		from:       []string{configMapA},
		to:         []string{reappliedA},
		summary:    map[string]int{"added": 0, "removed": 0, "changed": 1, "unchanged": 0},
		changes:    []brief{{Ref: "ConfigMap/ns/a", Change: "changed", Managers: []string{"snapply/Apply/2026-11-21T11:00:00Z"}}},
		diffsHave:  []string{"+  k: \"3\"\n"},
		exitCodeOn: 1,
	}, {
		name:    "only status and server-managed metadata differ",
		from:    []string{configMapA},
		to:      []string{noiseA},
		summary: map[string]int{"added": 0, "removed": 0, "changed": 0, "unchanged": 1},
		changes: []brief{},
	}, {
		name:    "added and removed; identity includes the kind",
		from:    []string{configMapA},
		to:      []string{secretA},
		summary: map[string]int{"added": 1, "removed": 1, "changed": 0, "unchanged": 0},
		changes: []brief{
			{Ref: "ConfigMap/ns/a", Change: "removed", Managers: []string{}},
			{Ref: "Secret/ns/a", Change: "added", Managers: []string{}},
		},
		diffsHave:  []string{"-  k: \"1\"\n", "+kind: Secret\n"},
		exitCodeOn: 1,
	}, {
		name:       "an added object lists every manager that wrote it",
		from:       []string{},
		to:         []string{configMapA},
		summary:    map[string]int{"added": 1, "removed": 0, "changed": 0, "unchanged": 0},
		changes:    []brief{{Ref: "ConfigMap/ns/a", Change: "added", Managers: []string{"snapply/Apply/2026-11-21T09:00:00Z"}}},
		exitCodeOn: 1,
	}, {
		name:       "identity leaves out the version",
		from:       []string{widget("v1")},
		to:         []string{widget("v2")},
		summary:    map[string]int{"added": 0, "removed": 0, "changed": 1, "unchanged": 0},
		changes:    []brief{{Ref: "Widget/w", Change: "changed", Managers: []string{}}},
		diffsHave:  []string{"-apiVersion: example.com/v1\n+apiVersion: example.com/v2\n"},
		exitCodeOn: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var from, to []*unstructured.Unstructured
			for _, y := range tt.from {
				from = append(from, obj(t, y))
			}
			for _, y := range tt.to {
				to = append(to, obj(t, y))
			}
			db, ids := storeOf(t, from, to)

			r := runRaw(t, "diff", "--store", db, ids[0], ids[1], "-o", "json")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			d := decodeDiff(t, r)
			if d.From != ids[0] || d.To != ids[1] {
				t.Errorf("from %q to %q, want %q to %q", d.From, d.To, ids[0], ids[1])
			}
			if diff := cmp.Diff(tt.summary, d.Summary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.changes, d.briefs()); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			var diffs strings.Builder
			for _, c := range d.Changes {
				diffs.WriteString(c.Diff)
			}
			for _, s := range tt.diffsHave {
				if !strings.Contains(diffs.String(), s) {
					t.Errorf("diffs lack %q:\n%s", s, diffs.String())
				}
			}
			for _, s := range tt.diffsLack {
				if strings.Contains(diffs.String(), s) {
					t.Errorf("diffs hold %q:\n%s", s, diffs.String())
				}
			}
			if len(tt.changes) == 0 && !strings.Contains(r.stdout, `"changes": []`) {
				t.Errorf("no changes must be [], not null:\n%s", r.stdout)
			}

			// --exit-code says whether anything differs, without an error
			// message; the text output agrees with the JSON.
			r = runRaw(t, "diff", "--store", db, ids[0], ids[1], "--exit-code")
			if r.code != tt.exitCodeOn || r.stderr != "" {
				t.Errorf("--exit-code: exit %d, want %d; stderr %q", r.code, tt.exitCodeOn, r.stderr)
			}
			if tt.exitCodeOn == 0 && !strings.Contains(r.stdout, "No differences.") {
				t.Errorf("text output does not say there are no differences:\n%s", r.stdout)
			}
		})
	}
}

func TestDiffText(t *testing.T) {
	edited := strings.Replace(strings.Replace(configMapA, `k: "1"`, `k: "2"`, 1), "  - {manager: snapply",
		`  - {manager: kubectl-edit, operation: Update, apiVersion: v1, time: "2026-11-21T10:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:k": {}}}}
  - {manager: snapply`, 1)
	gone := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone, namespace: ns}\ndata: {x: z}\n"
	// A manager name with a terminal escape sequence in it.
	added := `apiVersion: v1
kind: ConfigMap
metadata:
  name: new
  namespace: ns
  managedFields:
  - {manager: "evil\e[2J", operation: Update, apiVersion: v1, time: "2026-11-21T10:30:00Z", fieldsType: FieldsV1, fieldsV1: {}}
`
	db, ids := storeOf(t,
		[]*unstructured.Unstructured{obj(t, configMapA), obj(t, gone)},
		[]*unstructured.Unstructured{obj(t, edited), obj(t, added)})

	r := runRaw(t, "diff", "--store", db, ids[0], "latest", "--color=never")
	want := strings.NewReplacer("ID0", ids[0], "ID1", ids[1]).Replace(`Diff ID0 -> ID1: 1 added, 1 removed, 1 changed, 0 unchanged

~ configmap/a -n ns (changed)
    changed by kubectl-edit (Update, 2026-11-21T10:00:00Z)
    --- configmap/a -n ns (ID0)
    +++ configmap/a -n ns (ID1)
    @@ -1,6 +1,6 @@
     apiVersion: v1
     data:
    -  k: "1"
    +  k: "2"
     kind: ConfigMap
     metadata:
       name: a

- configmap/gone -n ns (removed)
    --- configmap/gone -n ns (ID0)
    +++ configmap/gone -n ns (ID1)
    @@ -1,7 +0,0 @@
    -apiVersion: v1
    -data:
    -  x: z
    -kind: ConfigMap
    -metadata:
    -  name: gone
    -  namespace: ns

+ configmap/new -n ns (added)
    written by evil\x1b[2J (Update, 2026-11-21T10:30:00Z)
    --- configmap/new -n ns (ID0)
    +++ configmap/new -n ns (ID1)
    @@ -0,0 +1,5 @@
    +apiVersion: v1
    +kind: ConfigMap
    +metadata:
    +  name: new
    +  namespace: ns
`)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if diff := cmp.Diff(want, r.stdout); diff != "" {
		t.Errorf("text output (-want +got):\n%s", diff)
	}

	// --color=always colours the lines, still without raw control
	// characters from the objects.
	r = runRaw(t, "diff", "--store", db, ids[0], ids[1], "--color=always")
	if !strings.Contains(r.stdout, "\x1b[31m-  k: \"1\"\x1b[0m") || strings.Contains(r.stdout, "\x1b[2J") {
		t.Errorf("coloured output:\n%q", r.stdout)
	}
}

func TestDiffArgs(t *testing.T) {
	db, ids := storeOf(t, []*unstructured.Unstructured{obj(t, configMapA)})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"one snapshot without --live", []string{ids[0]}, "diff takes two snapshots (A B), or one with --live; got 1 arguments"},
		{"two snapshots with --live", []string{ids[0], ids[0], "--live"}, "diff --live takes one snapshot, got 2 arguments"},
		{"unknown snapshot", []string{ids[0], "nope"}, `snapshot "nope" not found`},
		{"unknown output", []string{ids[0], ids[0], "-o", "yaml"}, `unknown output format "yaml": want text, json or html`},
		{"no store", []string{ids[0], ids[0], "--store", filepath.Join(t.TempDir(), "none.db")}, "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runRaw(t, append([]string{"diff", "--store", db}, tt.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, tt.want)
			}
		})
	}
}

const twoConfigMaps = `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: NS}
data: {k: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: NS}
data: {k: "2"}
`

func TestDiffBetweenApplies(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	v1 := manifests(t, ns, map[string]string{"cm.yaml": twoConfigMaps})
	v2 := manifests(t, ns, map[string]string{"cm.yaml": strings.NewReplacer(`name: b`, `name: c`, `k: "1"`, `k: "10"`).Replace(twoConfigMaps)})
	for i, dir := range []string{v1, v2} {
		if i > 0 {
			// managedFields times have a resolution of one second.
			time.Sleep(time.Second)
		}
		if r := applyIn(t, ns, db, dir); r.code != 0 {
			t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	runs := storeRuns(t, db)
	r := runRaw(t, "diff", "--store", db, runs[0].After, runs[1].After, "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	d := decodeDiff(t, r)
	want := []brief{
		{Ref: "ConfigMap/" + ns + "/a", Change: "changed", Managers: []string{"snapply/Apply/" + d.managerTime("a", "snapply")}},
		{Ref: "ConfigMap/" + ns + "/b", Change: "removed", Managers: []string{}},
		{Ref: "ConfigMap/" + ns + "/c", Change: "added", Managers: []string{"snapply/Apply/" + d.managerTime("c", "snapply")}},
	}
	if diff := cmp.Diff(want, d.briefs()); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if !strings.Contains(d.Changes[0].Diff, "-  k: \"1\"\n+  k: \"10\"\n") {
		t.Errorf("diff of a:\n%s", d.Changes[0].Diff)
	}
}

// managerTime returns the time of manager's write to the object named name.
func (d diffJSON) managerTime(name, manager string) string {
	for _, c := range d.Changes {
		for _, m := range c.Managers {
			if c.Ref.Name == name && m.Manager == manager {
				return m.Time
			}
		}
	}
	return "(none)"
}

func storeRuns(t *testing.T, path string) []store.Run {
	t.Helper()
	s, err := store.Open(path, store.Options{ReadOnly: true})
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

func TestDiffLive(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	ctx := context.Background()
	if r := applyIn(t, ns, db, manifests(t, ns, map[string]string{"cm.yaml": twoConfigMaps})); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Nothing moved since the apply.
	r := snapply(t, "diff", "--store", db, "latest", "--live", "--exit-code")
	if r.code != 0 || !strings.Contains(r.stdout, "-> live: 0 added, 0 removed, 0 changed, 2 unchanged") {
		t.Fatalf("no drift: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Someone edits a and deletes b.
	cs := clientset(t)
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "edited"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	edited, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var editTime string
	for _, mf := range edited.ManagedFields {
		if mf.Manager == "kubectl-edit" {
			editTime = mf.Time.UTC().Format("2006-01-02T15:04:05Z")
		}
	}

	r = snapply(t, "diff", "--store", db, "latest", "--live", "--exit-code", "-o", "json")
	if r.code != 1 {
		t.Fatalf("drift with --exit-code: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	d := decodeDiff(t, r)
	if d.To != "live" {
		t.Errorf("to = %q, want live", d.To)
	}
	want := []brief{
		{Ref: "ConfigMap/" + ns + "/a", Change: "changed", Managers: []string{"kubectl-edit/Update/" + editTime}},
		{Ref: "ConfigMap/" + ns + "/b", Change: "removed", Managers: []string{}},
	}
	if diff := cmp.Diff(want, d.briefs()); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"added": 0, "removed": 1, "changed": 1, "unchanged": 0}, d.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}

	r = snapply(t, "diff", "--store", db, "latest", "--live", "--color=never")
	for _, s := range []string{
		"~ configmap/a -n " + ns + " (changed)\n    changed by kubectl-edit (Update, " + editTime + ")\n",
		"    -  k: \"1\"\n    +  k: edited\n",
		"- configmap/b -n " + ns + " (removed)\n",
	} {
		if r.code != 0 || !strings.Contains(r.stdout, s) {
			t.Errorf("text output lacks %q: exit %d\n%s%s", s, r.code, r.stdout, r.stderr)
		}
	}
}

func TestDiffLiveNeverShowsSecretValues(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	ctx := context.Background()
	if r := applyIn(t, ns, db, manifests(t, ns, map[string]string{"secret.yaml": secretManifest("s3cr3t-data-value")})); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	const drifted = "s3cr3t-drifted-value"
	cs := clientset(t)
	s, err := cs.CoreV1().Secrets(ns).Get(ctx, "creds", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Data["token"] = []byte(drifted)
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}

	var outputs []string
	for _, o := range []string{"text", "json"} {
		r := snapply(t, "diff", "--store", db, "latest", "--live", "-o", o)
		if r.code != 0 {
			t.Fatalf("-o %s: exit %d\n%s%s", o, r.code, r.stdout, r.stderr)
		}
		outputs = append(outputs, r.stdout, r.stderr)
	}
	joined := strings.Join(outputs, "\n")
	// The diff still says which key changed.
	if !strings.Contains(joined, "-  token: <redacted sha256:") || !strings.Contains(joined, "+  token: <redacted sha256:") ||
		!strings.Contains(joined, "secret/creds -n "+ns+" (changed)") {
		t.Errorf("the diff does not show the changed key as digests:\n%s", joined)
	}
	if strings.Contains(joined, "+  password:") {
		t.Errorf("an unchanged key shows as changed:\n%s", joined)
	}
	for _, v := range append(secretValues, drifted) {
		for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
			if strings.Contains(joined, form) {
				t.Errorf("the output holds the secret value %q (as %q)", v, form)
			}
		}
	}
}

func TestDiffLiveLeavesOutTypesItCannotList(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	ctx := context.Background()
	files := map[string]string{"cm.yaml": twoConfigMaps, "secret.yaml": secretManifest("s3cr3t-data-value")}
	if r := applyIn(t, ns, db, manifests(t, ns, files)); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A user who may list ConfigMaps but not Secrets.
	cs := clientset(t)
	user := ns + "-viewer"
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: user}},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, user, metav1.DeleteOptions{})
		_ = cs.RbacV1().ClusterRoles().Delete(ctx, user, metav1.DeleteOptions{})
	})
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	r := snapply(t, "diff", "--store", db, "latest", "--live", "--as", user, "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	d := decodeDiff(t, r)
	want := []brief{{Ref: "ConfigMap/" + ns + "/b", Change: "removed", Managers: []string{}}}
	if diff := cmp.Diff(want, d.briefs()); diff != "" {
		t.Errorf("changes (-want +got): the Secret it could not list must not show as removed\n%s", diff)
	}
	if !strings.Contains(r.stderr, "warning: skipped secrets/v1: forbidden: its objects are not compared") {
		t.Errorf("stderr does not say what was left out:\n%s", r.stderr)
	}
}
