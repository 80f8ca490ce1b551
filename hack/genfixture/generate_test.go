package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// key names an object in a test.
type key struct{ kind, namespace, name string }

// parse decodes every file of fx the way a manifest reader would, checking
// that each file holds the objects of its own namespace, Namespace first.
func parse(t *testing.T, fx *Fixture) map[key]*unstructured.Unstructured {
	t.Helper()
	objs := map[key]*unstructured.Unstructured{}
	for _, f := range fx.Files {
		ns := strings.TrimSuffix(f.Name, ".yaml")
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(f.Data), 4096)
		for i := 0; ; i++ {
			u := &unstructured.Unstructured{}
			err := dec.Decode(u)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: document %d: %v", f.Name, i, err)
			}
			if i == 0 && (u.GetKind() != "Namespace" || u.GetName() != ns) {
				t.Fatalf("%s: first document is %s %s, want Namespace %s", f.Name, u.GetKind(), u.GetName(), ns)
			}
			if i > 0 && u.GetNamespace() != ns {
				t.Errorf("%s: %s %s is in namespace %q, want %q", f.Name, u.GetKind(), u.GetName(), u.GetNamespace(), ns)
			}
			if _, ok := u.Object["status"]; ok {
				t.Errorf("%s: %s %s has a status", f.Name, u.GetKind(), u.GetName())
			}
			k := key{u.GetKind(), u.GetNamespace(), u.GetName()}
			if _, dup := objs[k]; dup {
				t.Fatalf("%s: duplicate %v", f.Name, k)
			}
			objs[k] = u
		}
	}
	return objs
}

func generate(t *testing.T, o Options) *Fixture {
	t.Helper()
	fx, err := Generate(o)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", o, err)
	}
	return fx
}

func TestGenerateCounts(t *testing.T) {
	tests := []struct {
		name      string
		opts      Options
		wantFiles int
		wantKinds map[string]int
	}{{
		name:      "benchmark base",
		opts:      DefaultOptions(),
		wantFiles: 10,
		wantKinds: map[string]int{"Namespace": 10, "ConfigMap": 400, "Deployment": 300, "Service": 300},
	}, {
		name:      "benchmark changed adds a ConfigMap and a Deployment per namespace",
		opts:      Options{Prefix: "bench", Namespaces: 10, PerNamespace: 100, Variant: Changed, Seed: 1},
		wantFiles: 10,
		wantKinds: map[string]int{"Namespace": 10, "ConfigMap": 410, "Deployment": 310, "Service": 300},
	}, {
		name:      "a partial block",
		opts:      Options{Prefix: "bench", Namespaces: 2, PerNamespace: 7, Variant: Base, Seed: 3},
		wantFiles: 2,
		wantKinds: map[string]int{"Namespace": 2, "ConfigMap": 8, "Deployment": 6},
	}, {
		name:      "namespaces only",
		opts:      Options{Prefix: "bench", Namespaces: 3, PerNamespace: 0, Variant: Changed, Seed: 1},
		wantFiles: 3,
		wantKinds: map[string]int{"Namespace": 3, "ConfigMap": 3, "Deployment": 3},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := generate(t, tt.opts)
			objs := parse(t, fx)
			got := map[string]int{}
			for k := range objs {
				got[k.kind]++
			}
			if diff := cmp.Diff(tt.wantKinds, got); diff != "" {
				t.Errorf("objects per kind (-want +got):\n%s", diff)
			}
			if len(fx.Files) != tt.wantFiles {
				t.Errorf("got %d files, want %d", len(fx.Files), tt.wantFiles)
			}
			if fx.Stats.Objects != len(objs) {
				t.Errorf("Stats.Objects = %d, but the files hold %d objects", fx.Stats.Objects, len(objs))
			}
		})
	}
}

// Every Deployment reads a ConfigMap and every Service selects a Deployment
// of the fixture, as in a real application.
func TestGenerateReferences(t *testing.T) {
	objs := parse(t, generate(t, Options{Prefix: "bench", Namespaces: 2, PerNamespace: 100, Variant: Changed, Seed: 1}))
	for k, u := range objs {
		switch k.kind {
		case "Deployment":
			containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			envFrom := containers[0].(map[string]any)["envFrom"].([]any)
			cm, _, _ := unstructured.NestedString(envFrom[0].(map[string]any), "configMapRef", "name")
			if objs[key{"ConfigMap", k.namespace, cm}] == nil {
				t.Errorf("%v reads ConfigMap %s, which the fixture does not hold", k, cm)
			}
		case "Service":
			app, _, _ := unstructured.NestedString(u.Object, "spec", "selector", "app.kubernetes.io/name")
			if objs[key{"Deployment", k.namespace, app}] == nil {
				t.Errorf("%v selects Deployment %s, which the fixture does not hold", k, app)
			}
		}
	}
}

// sameFiles reports whether a and b hold the same files with the same bytes.
func sameFiles(a, b *Fixture) bool {
	if len(a.Files) != len(b.Files) {
		return false
	}
	for i := range a.Files {
		if a.Files[i].Name != b.Files[i].Name || !bytes.Equal(a.Files[i].Data, b.Files[i].Data) {
			return false
		}
	}
	return true
}

func TestGenerateIsDeterministic(t *testing.T) {
	for _, v := range []Variant{Base, Changed} {
		o := Options{Prefix: "bench", Namespaces: 3, PerNamespace: 50, Variant: v, Seed: 7}
		if !sameFiles(generate(t, o), generate(t, o)) {
			t.Errorf("%s: two runs with the same options write different files", v)
		}
		other := o
		other.Seed = 8
		if sameFiles(generate(t, o), generate(t, other)) {
			t.Errorf("%s: seeds 7 and 8 write the same files", v)
		}
	}
}

// Another prefix writes the same objects into other namespaces, so that
// the benchmark can give each tool its own copy of the fixture on one
// cluster: the files are those of the default prefix with every namespace
// name replaced, and nothing else.
func TestGeneratePrefix(t *testing.T) {
	for _, v := range []Variant{Base, Changed} {
		o := Options{Prefix: "bench", Namespaces: 3, PerNamespace: 20, Variant: v, Seed: 1}
		bench := generate(t, o)
		o.Prefix = "kubectl-r1"
		other := generate(t, o)
		parse(t, other) // each file holds its own namespace's objects
		want := &Fixture{Stats: bench.Stats}
		for i, f := range bench.Files {
			from, to := fmt.Sprintf("bench-%02d", i), fmt.Sprintf("kubectl-r1-%02d", i)
			want.Files = append(want.Files, File{
				Name: strings.ReplaceAll(f.Name, from, to),
				Data: []byte(strings.ReplaceAll(string(f.Data), from, to)),
			})
		}
		if diff := cmp.Diff(want, other); diff != "" {
			t.Errorf("%s with prefix kubectl-r1 (-want +got):\n%s", v, diff)
		}
	}
}

// The changed variant changes 10% of the base objects of every namespace,
// the way the benchmark expects, adds two, and leaves the rest identical.
func TestGenerateChanged(t *testing.T) {
	o := DefaultOptions()
	base := parse(t, generate(t, o))
	o.Variant = Changed
	fx := generate(t, o)
	changed := parse(t, fx)

	changedPerNamespace := map[string]int{}
	for k, b := range base {
		c, ok := changed[k]
		if !ok {
			t.Errorf("%v: in the base, missing from the changed variant", k)
			continue
		}
		if cmp.Equal(b, c) {
			continue
		}
		changedPerNamespace[k.namespace]++
		// Each change is one a user would see in a plan.
		switch k.kind {
		case "ConfigMap":
			if got, _, _ := unstructured.NestedString(c.Object, "data", "LOG_LEVEL"); got != "debug" {
				t.Errorf("%v: LOG_LEVEL = %q, want debug", k, got)
			}
		case "Deployment":
			containers, _, _ := unstructured.NestedSlice(c.Object, "spec", "template", "spec", "containers")
			if got := containers[0].(map[string]any)["image"]; got != changedImage {
				t.Errorf("%v: image = %v, want %s", k, got, changedImage)
			}
			br, _, _ := unstructured.NestedInt64(b.Object, "spec", "replicas")
			cr, _, _ := unstructured.NestedInt64(c.Object, "spec", "replicas")
			if cr != br+1 {
				t.Errorf("%v: replicas %d -> %d, want one more", k, br, cr)
			}
		case "Service":
			ports, _, _ := unstructured.NestedSlice(c.Object, "spec", "ports")
			if got := ports[0].(map[string]any)["port"]; got != int64(changedPort) {
				t.Errorf("%v: port = %v, want %d", k, got, changedPort)
			}
		default:
			t.Errorf("%v: changed, but the changed variant changes no %s", k, k.kind)
		}
	}
	want := map[string]int{}
	for i := range o.Namespaces {
		want[fmt.Sprintf("bench-%02d", i)] = 10
	}
	if diff := cmp.Diff(want, changedPerNamespace); diff != "" {
		t.Errorf("changed objects per namespace (-want +got):\n%s", diff)
	}
	var added []key
	for k := range changed {
		if base[k] == nil {
			added = append(added, k)
		}
	}
	if len(added) != 20 {
		t.Errorf("changed variant adds %d objects, want 20: %v", len(added), added)
	}
	if diff := cmp.Diff(Stats{Objects: 1030, Changed: 100, Added: 20}, fx.Stats); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestGenerateRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no namespaces", Options{Prefix: "bench", Namespaces: 0, PerNamespace: 1, Variant: Base}, "namespaces: 0"},
		{"negative per namespace", Options{Prefix: "bench", Namespaces: 1, PerNamespace: -1, Variant: Base}, "per-namespace: -1"},
		{"unknown variant", Options{Prefix: "bench", Namespaces: 1, PerNamespace: 1, Variant: "other"}, `variant: "other"`},
		{"no prefix", Options{Namespaces: 1, PerNamespace: 1, Variant: Base}, `prefix: "": namespace -00`},
		{"upper-case prefix", Options{Prefix: "Bench", Namespaces: 1, PerNamespace: 1, Variant: Base}, `prefix: "Bench"`},
		{"underscore in prefix", Options{Prefix: "my_bench", Namespaces: 1, PerNamespace: 1, Variant: Base}, `prefix: "my_bench"`},
		{"namespace name too long", Options{Prefix: strings.Repeat("a", 61), Namespaces: 1, PerNamespace: 1, Variant: Base}, "must be no more than 63 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Generate(%+v) = %v, want an error containing %q", tt.opts, err, tt.want)
			}
		})
	}
}

func TestRunWritesFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fixture")
	var out bytes.Buffer
	args := []string{"--out", dir, "--namespaces", "2", "--per-namespace", "10", "--variant", "changed"}
	if err := run(args, &out, io.Discard); err != nil {
		t.Fatalf("run: %v", err)
	}
	if want := dir + ": wrote 26 objects in 2 files (2 changed, 4 added)\n"; out.String() != want {
		t.Errorf("summary = %q, want %q", out.String(), want)
	}
	fx := generate(t, Options{Prefix: "bench", Namespaces: 2, PerNamespace: 10, Variant: Changed, Seed: 1})
	for _, f := range fx.Files {
		got, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("%s: written bytes differ from Generate's", f.Name)
		}
	}
	// A second run into the same directory would mix two fixtures.
	if err := run(args, io.Discard, io.Discard); !errors.Is(err, errNotEmpty) {
		t.Errorf("second run into %s: %v, want %v", dir, err, errNotEmpty)
	}
}

func TestRunPrefix(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--out", dir, "--namespaces", "2", "--per-namespace", "3", "--prefix", "kapp-r2"}
	if err := run(args, io.Discard, io.Discard); err != nil {
		t.Fatalf("run: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if diff := cmp.Diff([]string{"kapp-r2-00.yaml", "kapp-r2-01.yaml"}, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(filepath.Join(dir, "kapp-r2-01.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "namespace: kapp-r2-01\n") || strings.Contains(string(data), "bench-0") {
		t.Errorf("kapp-r2-01.yaml does not place its objects in namespace kapp-r2-01:\n%s", data)
	}
}

// The changed1 variant changes 1% of the objects and adds none.
func TestGenerateChanged1(t *testing.T) {
	o := DefaultOptions()
	o.Variant = Changed1
	fx, err := Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Stats{Objects: 1010, Changed: 10, Added: 0}, fx.Stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	base, err := Generate(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	differ := 0
	for i := range fx.Files {
		if !bytes.Equal(fx.Files[i].Data, base.Files[i].Data) {
			differ++
		}
	}
	if differ != 10 {
		t.Errorf("%d files differ from the base, want one per namespace (10)", differ)
	}
}
