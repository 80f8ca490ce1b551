package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/object"
)

// find returns the object called ref (as kubectl prints it), or fails.
func find(t *testing.T, objs []object.Object, ref string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.Ref.String() == ref {
			return o.Obj
		}
	}
	t.Fatalf("no object %s in %v", ref, summary(objs))
	return nil
}

// field returns the value at path in u, or fails.
func field(t *testing.T, u *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	if err != nil || !ok {
		t.Fatalf("%s/%s: no field %s", u.GetKind(), u.GetName(), strings.Join(path, "."))
	}
	return v
}

// container returns the first container of a workload.
func container(t *testing.T, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	cs := field(t, u, "spec", "template", "spec", "containers").([]any)
	return cs[0].(map[string]any)
}

func TestRenderPlain(t *testing.T) {
	tests := []struct {
		name  string
		path  string
		opts  Options
		want  []string
		check func(t *testing.T, objs []object.Object)
	}{
		{
			name: "single file",
			path: "testdata/plain/single.yaml",
			want: []string{"configmap/settings -n prod @ plain/single.yaml:1"},
			check: func(t *testing.T, objs []object.Object) {
				if got := field(t, objs[0].Obj, "data", "color"); got != "blue" {
					t.Errorf("data.color = %v, want blue", got)
				}
			},
		},
		{
			name: "multi-document file with exact lines",
			path: "testdata/plain/multi.yaml",
			want: []string{
				"namespace/prod @ plain/multi.yaml:3",
				"serviceaccount/web -n prod @ plain/multi.yaml:12",
				"service/web -n prod @ plain/multi.yaml:18",
				"deployment.apps/web -n prod @ plain/multi.yaml:29",
			},
		},
		{
			name: "List expanded into its items",
			path: "testdata/plain/list.yaml",
			want: []string{"configmap/first -n prod @ plain/list.yaml:4", "configmap/second -n prod @ plain/list.yaml:10"},
		},
		{
			name: "JSON file",
			path: "testdata/plain/deploy.json",
			want: []string{"deployment.apps/from-json -n prod @ plain/deploy.json:1"},
			check: func(t *testing.T, objs []object.Object) {
				if got := field(t, objs[0].Obj, "spec", "replicas"); got != int64(3) {
					t.Errorf("spec.replicas = %#v, want int64(3)", got)
				}
			},
		},
		{
			name: "recursive directory: lexical order, hidden and non-YAML files skipped, kustomization built",
			path: "testdata/tree",
			want: []string{
				"namespace/tree @ tree/00-namespace.yaml:1",
				"deployment.apps/web -n tree @ tree/apps/web.yml:1",
				"service/web -n tree @ tree/apps/web.yml:7",
				"configmap/kustomized -n tree @ tree/kustomized/configmap.yaml:1",
				"configmap/last -n tree @ tree/z-last.json:1",
			},
			check: func(t *testing.T, objs []object.Object) {
				if got := field(t, find(t, objs, "configmap/kustomized -n tree"), "data", "mode"); got != "patched" {
					t.Errorf("kustomized data.mode = %v, want patched (the kustomization's patch)", got)
				}
			},
		},
		{
			name: "kustomization file given as a file builds its directory",
			path: "testdata/tree/kustomized/kustomization.yaml",
			want: []string{"configmap/kustomized -n tree @ tree/kustomized/configmap.yaml:1"},
		},
		{
			name: "only comments, allowed empty",
			path: "testdata/plain/comments-only.yaml",
			opts: Options{AllowEmpty: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Root = "testdata"
			objs, err := Render(context.Background(), tt.path, tt.opts)
			if err != nil {
				t.Fatalf("Render() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, summary(objs), cmpEmpty); diff != "" {
				t.Errorf("Render() objects (-want +got):\n%s", diff)
			}
			for _, o := range objs {
				if o.Ref != object.RefOf(o.Obj) {
					t.Errorf("Ref %v does not match the object %v", o.Ref, object.RefOf(o.Obj))
				}
			}
			if tt.check != nil {
				tt.check(t, objs)
			}
		})
	}
}

func TestRenderKustomize(t *testing.T) {
	objs, err := Render(context.Background(), "testdata/kustomize/overlay", Options{Root: "testdata"})
	if err != nil {
		t.Fatal(err)
	}
	// Generated names carry a content hash: compare them as a pattern.
	hash := regexp.MustCompile(`-[a-z0-9]{10}( |$)`)
	var got []string
	for _, s := range summary(objs) {
		got = append(got, hash.ReplaceAllString(s, "-HASH$1"))
	}
	want := []string{
		"deployment.apps/prod-web -n prod @ kustomize/base/app.yaml:1",
		"service/prod-web -n prod @ kustomize/base/app.yaml:24",
		"configmap/prod-app-config-HASH -n prod @ kustomize/base/kustomization.yaml:6",
		"secret/prod-db-HASH -n prod @ kustomize/overlay/kustomization.yaml:22",
		"configmap/prod-alert-rules -n prod @ kustomize/components/monitoring/rules.yaml:1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Render() objects (-want +got):\n%s", diff)
	}

	var configName string
	for _, o := range objs {
		if o.Ref.Kind == "ConfigMap" && strings.HasPrefix(o.Ref.Name, "prod-app-config-") {
			configName = o.Ref.Name
		}
	}
	web := find(t, objs, "deployment.apps/prod-web -n prod")
	checks := []struct {
		what string
		got  any
		want any
	}{
		{"strategic merge patch: replicas", field(t, web, "spec", "replicas"), int64(3)},
		{"JSON 6902 patch: image", container(t, web)["image"], "nginx:1.27.3"},
		{"component patch: annotation", web.GetAnnotations()["prometheus.io/scrape"], "true"},
		{"commonLabels: label", web.GetLabels()["env"], "prod"},
		{"commonLabels: selector", field(t, web, "spec", "selector", "matchLabels", "env"), "prod"},
		{"generated name referenced with its hash", container(t, web)["envFrom"].([]any)[0].(map[string]any)["configMapRef"].(map[string]any)["name"], configName},
		{"configMapGenerator file", field(t, find(t, objs, "configmap/"+configName+" -n prod"), "data", "config.properties"), "threads=4\n"},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.what, diff)
		}
	}
	assertNoTrackingAnnotations(t, objs)
}

// assertNoTrackingAnnotations checks that kustomize's build annotations were
// removed, with the annotations map itself when nothing else was in it.
func assertNoTrackingAnnotations(t *testing.T, objs []object.Object) {
	t.Helper()
	for _, o := range objs {
		for k := range o.Obj.GetAnnotations() {
			if strings.Contains(k, "config.kubernetes.io/") {
				t.Errorf("%s: tracking annotation %s left", o.Ref, k)
			}
		}
		if ann, ok := o.Obj.Object["metadata"].(map[string]any)["annotations"]; ok && len(ann.(map[string]any)) == 0 {
			t.Errorf("%s: empty annotations map left", o.Ref)
		}
	}
}

func TestRenderDemo(t *testing.T) {
	render := func(overlay string) []object.Object {
		t.Helper()
		objs, err := Render(context.Background(), "../../fixtures/demo/overlays/"+overlay, Options{Root: "../../fixtures/demo"})
		if err != nil {
			t.Fatal(err)
		}
		assertNoTrackingAnnotations(t, objs)
		return objs
	}
	v1, v2 := render("v1"), render("v2")

	secretName := func(objs []object.Object) string {
		for _, o := range objs {
			if o.Ref.Kind == "Secret" {
				if !regexp.MustCompile(`^web-secret-[a-z0-9]{10}$`).MatchString(o.Ref.Name) {
					t.Errorf("secret name %q has no hash suffix", o.Ref.Name)
				}
				return o.Ref.Name
			}
		}
		t.Fatal("no Secret")
		return ""
	}
	s1, s2 := secretName(v1), secretName(v2)
	if s1 == s2 {
		t.Errorf("the secret name did not change with its value: %s", s1)
	}

	web1, web2 := find(t, v1, "deployment.apps/web -n demo"), find(t, v2, "deployment.apps/web -n demo")
	secretRef := func(u *unstructured.Unstructured) any {
		return container(t, u)["env"].([]any)[0].(map[string]any)["valueFrom"].(map[string]any)["secretKeyRef"].(map[string]any)["name"]
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"v1 image", container(t, web1)["image"], "nginx:1.27.0"},
		{"v2 image", container(t, web2)["image"], "nginx:1.27.3"},
		{"v1 replicas", field(t, web1, "spec", "replicas"), int64(2)},
		{"v2 replicas", field(t, web2, "spec", "replicas"), int64(3)},
		{"v1 secret ref", secretRef(web1), s1},
		{"v2 secret ref", secretRef(web2), s2},
		{"v1 LOG_LEVEL", field(t, find(t, v1, "configmap/web-config -n demo"), "data", "LOG_LEVEL"), "info"},
		{"v2 LOG_LEVEL", field(t, find(t, v2, "configmap/web-config -n demo"), "data", "LOG_LEVEL"), "debug"},
		{"api image", container(t, find(t, v1, "deployment.apps/api -n demo"))["image"], "registry.k8s.io/pause:3.10"},
		{"web source", v2[3].Source, object.Source{File: "base/deployment-web.yaml", Line: 1}},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.what, diff)
		}
	}
	if diff := cmp.Diff(find(t, v1, "deployment.apps/api -n demo"), find(t, v2, "deployment.apps/api -n demo")); diff != "" {
		t.Errorf("deployment api differs between v1 and v2 (-v1 +v2):\n%s", diff)
	}
	find(t, v2, "configmap/feature-flags -n demo")
	for _, o := range v1 {
		if o.Ref.Name == "feature-flags" {
			t.Error("v1 has feature-flags")
		}
	}
	if len(v1) != 7 || len(v2) != 8 {
		t.Errorf("v1 has %d objects, v2 %d; want 7 and 8", len(v1), len(v2))
	}
}

func TestRenderErrors(t *testing.T) {
	bad := func(p string) string { return "../../fixtures/bad/" + p }
	outsideRoot, err := filepath.Abs(bad("outside-root"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		root string // default ../../fixtures
		want string // the whole message, or a regexp when it starts with ^
		is   error
		src  object.Source
	}{
		{name: "tab indentation", path: bad("tab-indent.yaml"), want: "render: bad/tab-indent.yaml:6: yaml: found character that cannot start any token", src: object.Source{File: "bad/tab-indent.yaml", Line: 6}},
		{name: "unclosed quote", path: bad("unclosed-quote.yaml"), want: "render: bad/unclosed-quote.yaml:4: yaml: found unexpected end of stream"},
		{name: "bad indentation", path: bad("bad-indent.yaml"), want: "render: bad/bad-indent.yaml:7: yaml: did not find expected key"},
		{name: "missing kind", path: bad("missing-kind.yaml"), want: "render: bad/missing-kind.yaml:2: object has no kind", src: object.Source{File: "bad/missing-kind.yaml", Line: 2}},
		{name: "missing name", path: bad("missing-name.yaml"), want: "render: bad/missing-name.yaml:6: ConfigMap has no metadata.name"},
		{name: "missing apiVersion", path: bad("missing-apiversion.yaml"), want: "render: bad/missing-apiversion.yaml:1: ConfigMap has no apiVersion"},
		{name: "list document", path: bad("list-document.yaml"), want: "render: bad/list-document.yaml:2: document is a list, not an object (wrap the items in a kind: List)"},
		{name: "scalar document", path: bad("scalar-document.yaml"), want: "render: bad/scalar-document.yaml:6: document is a scalar, not an object"},
		{name: "duplicate across files", path: bad("duplicate"), want: "render: deployment.apps/web -n prod is defined twice: bad/duplicate/a.yaml:1 and bad/duplicate/b.yaml:8"},
		{
			name: "kustomize missing resource",
			path: bad("kustomize-missing-resource"),
			want: `^render: bad/kustomize-missing-resource/kustomization\.yaml: accumulating resources: .*'missing\.yaml'.* bad/kustomize-missing-resource/missing\.yaml: no such file or directory$`,
			src:  object.Source{File: "bad/kustomize-missing-resource/kustomization.yaml"},
		},
		{
			name: "kustomize cycle",
			path: bad("kustomize-cycle/a"),
			want: `^render: bad/kustomize-cycle/a/kustomization\.yaml: accumulating resources: .*cycle detected: candidate root 'bad/kustomize-cycle/a' contains visited root 'bad/kustomize-cycle/a'$`,
		},
		{
			name: "base outside the root",
			path: bad("outside-root"),
			root: bad("outside-root"),
			want: "render: kustomization.yaml: ../../demo/base is outside the root " + outsideRoot,
			is:   ErrOutsideRoot,
		},
		{
			name: "remote base",
			path: bad("kustomize-remote"),
			want: `render: bad/kustomize-remote/kustomization.yaml: resources entry "https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v5.4.3" is remote: only files under the root are rendered`,
			is:   ErrRemote,
		},
		{name: "nonexistent path", path: "./nope", want: "render: ./nope: no such file or directory", is: fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Root = "../../fixtures"
			if tt.root != "" {
				opts.Root = tt.root
			}
			objs, err := Render(context.Background(), tt.path, opts)
			if err == nil {
				t.Fatalf("Render() = %v, want an error", summary(objs))
			}
			msg := err.Error()
			if strings.HasPrefix(tt.want, "^") {
				if !regexp.MustCompile(tt.want).MatchString(msg) {
					t.Errorf("Render() error = %q, want a match for %s", msg, tt.want)
				}
			} else if msg != tt.want {
				t.Errorf("Render() error = %q, want %q", msg, tt.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("Render() error is not one line: %q", msg)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Render() error %v is not %v", err, tt.is)
			}
			if tt.src != (object.Source{}) {
				var rerr *Error
				if !errors.As(err, &rerr) {
					t.Fatalf("Render() error %T is not an *Error", err)
				}
				if diff := cmp.Diff(tt.src, rerr.Source); diff != "" {
					t.Errorf("Render() error source (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestRenderDuplicateError(t *testing.T) {
	_, err := Render(context.Background(), "../../fixtures/bad/duplicate", Options{Root: "../../fixtures/bad"})
	var dup *DuplicateError
	if !errors.As(err, &dup) {
		t.Fatalf("Render() error = %v, want a *DuplicateError", err)
	}
	want := &DuplicateError{
		Key:    object.Key{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"},
		First:  object.Source{File: "duplicate/a.yaml", Line: 1},
		Second: object.Source{File: "duplicate/b.yaml", Line: 8},
	}
	if diff := cmp.Diff(want, dup); diff != "" {
		t.Errorf("DuplicateError (-want +got):\n%s", diff)
	}
}

// write creates files under dir: name -> content; a content starting with
// "->" makes a symbolic link to the rest.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n"

func TestRenderEmpty(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"only-comments.yaml": "# nothing\n---\n", ".hidden.yaml": fmt.Sprintf(configMap, "hidden"), "notes.txt": "x"})
	for _, path := range []string{t.TempDir(), dir} {
		_, err := Render(context.Background(), path, DefaultOptions())
		if !errors.Is(err, ErrNoObjects) {
			t.Errorf("Render(%s) error = %v, want ErrNoObjects", path, err)
		}
		if want := "render: " + path + ": " + ErrNoObjects.Error(); err != nil && err.Error() != want {
			t.Errorf("Render(%s) error = %q, want %q", path, err, want)
		}
		objs, err := Render(context.Background(), path, Options{AllowEmpty: true})
		if err != nil || len(objs) != 0 {
			t.Errorf("Render(%s, AllowEmpty) = %v, %v; want nothing and no error", path, summary(objs), err)
		}
	}
}

func TestRenderDefaultRoot(t *testing.T) {
	repo := t.TempDir()
	write(t, repo, map[string]string{
		".git/HEAD":                   "ref: refs/heads/main\n",
		"apps/web/cm.yaml":            fmt.Sprintf(configMap, "web"),
		"worktree/.git":               "gitdir: ../.git/worktrees/x\n",
		"worktree/apps/cm.yaml":       fmt.Sprintf(configMap, "wt"),
		"apps/web/kustomization.yaml": "resources: [cm.yaml]\n",
	})
	plain := t.TempDir()
	write(t, plain, map[string]string{"deep/cm.yaml": fmt.Sprintf(configMap, "plain")})
	tests := []struct {
		path string
		want object.Source
	}{
		{filepath.Join(repo, "apps/web/cm.yaml"), object.Source{File: "apps/web/cm.yaml", Line: 1}},
		{filepath.Join(repo, "apps/web"), object.Source{File: "apps/web/cm.yaml", Line: 1}},
		{filepath.Join(repo, "worktree/apps"), object.Source{File: "apps/cm.yaml", Line: 1}},
		{filepath.Join(plain, "deep/cm.yaml"), object.Source{File: "cm.yaml", Line: 1}},
		{filepath.Join(plain, "deep"), object.Source{File: "cm.yaml", Line: 1}},
	}
	for _, tt := range tests {
		objs, err := Render(context.Background(), tt.path, DefaultOptions())
		if err != nil {
			t.Errorf("Render(%s) error = %v", tt.path, err)
			continue
		}
		if diff := cmp.Diff(tt.want, objs[0].Source); diff != "" {
			t.Errorf("Render(%s) source (-want +got):\n%s", tt.path, diff)
		}
	}
}

func TestRenderRoot(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write(t, outside, map[string]string{"cm.yaml": fmt.Sprintf(configMap, "outside")})
	write(t, dir, map[string]string{
		"root/shared/patch.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  patched: \"yes\"\n",
		"root/app/cm.yaml":       fmt.Sprintf(configMap, "cm"),
		// A ../ file under the root is fine (kustomize's own restrictor refuses it).
		"root/app/kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: ../shared/patch.yaml\n",
		// A ../ that leaves the root is refused, as a file or a base.
		"root/up-file/kustomization.yaml": "resources: [../../sibling.yaml]\n",
		"sibling.yaml":                    fmt.Sprintf(configMap, "sibling"),
		// So is a symbolic link that points outside.
		"root/link-plain/cm.yaml":           "->" + filepath.Join(outside, "cm.yaml"),
		"root/link-kust/kustomization.yaml": "resources: [cm.yaml]\n",
		"root/link-kust/cm.yaml":            "->" + filepath.Join(outside, "cm.yaml"),
		"root/link-dir":                     "->" + outside,
	})
	root := filepath.Join(dir, "root")
	outsideReal, _ := filepath.EvalSymlinks(outside)
	dirReal, _ := filepath.EvalSymlinks(dir)
	rootReal := filepath.Join(dirReal, "root")
	rel := func(p string) string { r, _ := filepath.Rel(rootReal, p); return r }

	objs, err := Render(context.Background(), filepath.Join(root, "app"), Options{Root: root})
	if err != nil {
		t.Fatalf("Render(app) error = %v", err)
	}
	if got := field(t, objs[0].Obj, "data", "patched"); got != "yes" {
		t.Errorf("patch from ../shared not applied: data.patched = %v", got)
	}

	tests := []struct {
		path string
		want string
	}{
		{filepath.Join(root, "up-file"), "render: up-file/kustomization.yaml: ../sibling.yaml is outside the root " + rootReal},
		{filepath.Join(root, "link-plain"), "render: link-plain/cm.yaml: " + rel(filepath.Join(outsideReal, "cm.yaml")) + " is outside the root " + rootReal},
		{filepath.Join(root, "link-kust"), "render: link-kust/kustomization.yaml: " + rel(filepath.Join(outsideReal, "cm.yaml")) + " is outside the root " + rootReal},
		{filepath.Join(root, "link-dir"), "render: " + filepath.Join(root, "link-dir") + ": is outside the root " + rootReal},
		{filepath.Join(dir, "sibling.yaml"), "render: " + filepath.Join(dir, "sibling.yaml") + ": is outside the root " + rootReal},
	}
	for _, tt := range tests {
		_, err := Render(context.Background(), tt.path, Options{Root: root})
		if err == nil || err.Error() != tt.want {
			t.Errorf("Render(%s) error = %v, want %q", tt.path, err, tt.want)
		}
		if !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("Render(%s) error %v is not ErrOutsideRoot", tt.path, err)
		}
	}
}

func TestRenderRemoteNested(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"overlay/kustomization.yaml": "resources: [../base]\n",
		"base/kustomization.yaml":    "resources:\n- git@github.com:example/repo.git//deploy?ref=main\n",
	})
	_, err := Render(context.Background(), filepath.Join(dir, "overlay"), Options{Root: dir})
	want := `render: base/kustomization.yaml: resources entry "git@github.com:example/repo.git//deploy?ref=main" is remote: only files under the root are rendered`
	if err == nil || err.Error() != want {
		t.Errorf("Render() error = %v, want %q", err, want)
	}
}

func TestRenderCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, p := range []string{"testdata/tree", "testdata/plain/single.yaml"} {
		if _, err := Render(ctx, p, DefaultOptions()); !errors.Is(err, context.Canceled) {
			t.Errorf("Render(%s) error = %v, want context.Canceled", p, err)
		}
	}
}

// TestRenderConcurrent renders kustomizations from several goroutines: the
// results must not mix (run with -race).
func TestRenderConcurrent(t *testing.T) {
	paths := []string{"../../fixtures/demo/overlays/v1", "../../fixtures/demo/overlays/v2", "testdata/kustomize/overlay", "testdata/tree"}
	want := map[string][]string{}
	for _, p := range paths {
		objs, err := Render(context.Background(), p, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		want[p] = summary(objs)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		p := paths[i%len(paths)]
		wg.Go(func() {
			objs, err := Render(context.Background(), p, DefaultOptions())
			if err != nil {
				t.Error(err)
				return
			}
			if diff := cmp.Diff(want[p], summary(objs)); diff != "" {
				t.Errorf("Render(%s) concurrently (-want +got):\n%s", p, diff)
			}
		})
	}
	wg.Wait()
}

// TestRenderOutsideRootFixtureUnderWiderRoot checks that fixtures/bad/outside-root
// is refused only because of the root: with the whole fixtures tree as the
// root it renders the demo base.
func TestRenderOutsideRootFixtureUnderWiderRoot(t *testing.T) {
	objs, err := Render(context.Background(), "../../fixtures/bad/outside-root", Options{Root: "../../fixtures"})
	if err != nil {
		t.Fatalf("Render() error = %v", err)
	}
	if got := objs[0].Source; got != (object.Source{File: "demo/base/namespace.yaml", Line: 1}) {
		t.Errorf("first object from %s, want demo/base/namespace.yaml:1", got)
	}
}
