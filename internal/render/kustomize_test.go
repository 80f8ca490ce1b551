package render

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// TestOriginTrackingChangesNothing checks that the objects Render returns
// are exactly what kustomize builds without the origin tracking Render
// turns on to find sources.
func TestOriginTrackingChangesNothing(t *testing.T) {
	for _, dir := range []string{"testdata/kustomize/overlay", "testdata/tree/kustomized", "../../fixtures/demo/overlays/v1", "../../fixtures/demo/overlays/v2"} {
		t.Run(dir, func(t *testing.T) {
			objs, err := Render(context.Background(), dir, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			var got []map[string]any
			for _, o := range objs {
				got = append(got, o.Obj.Object)
			}

			opts := krusty.MakeDefaultOptions()
			opts.LoadRestrictions = types.LoadRestrictionsNone
			abs, err := filepath.Abs(dir)
			if err != nil {
				t.Fatal(err)
			}
			m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), abs)
			if err != nil {
				t.Fatal(err)
			}
			var want []map[string]any
			for _, res := range m.Resources() {
				b, err := res.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				var v map[string]any
				if err := utiljson.Unmarshal(b, &v); err != nil {
					t.Fatal(err)
				}
				want = append(want, v)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Render() differs from a plain kustomize build (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderKeepsUserAnnotations checks that only the tracking annotations
// are removed, even when the kustomization asks for them itself.
func TestRenderKeepsUserAnnotations(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"kustomization.yaml": "buildMetadata: [originAnnotations, transformerAnnotations]\ncommonAnnotations:\n  team: web\nresources: [cm.yaml]\n",
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  annotations:\n    note: kept\n",
	})
	objs, err := Render(context.Background(), dir, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"note": "kept", "team": "web"}, objs[0].Obj.GetAnnotations()); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if got := objs[0].Source.String(); got != "cm.yaml:1" {
		t.Errorf("source = %s, want cm.yaml:1", got)
	}
}

func TestWithOriginAnnotations(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "added",
			in:   "resources:\n- a.yaml # the app\n",
			want: "resources:\n- a.yaml # the app\nbuildMetadata:\n- originAnnotations\n",
		},
		{
			name: "appended to the user's list",
			in:   "buildMetadata: [managedByLabel]\nresources: [a.yaml]\n",
			want: "buildMetadata: [managedByLabel, originAnnotations]\nresources: [a.yaml]\n",
		},
		{
			name: "already there",
			in:   "buildMetadata: [originAnnotations]\n",
			want: "buildMetadata: [originAnnotations]\n",
		},
		{
			name: "not YAML: left for kustomize to report",
			in:   "resources: [a.yaml\n",
			want: "resources: [a.yaml\n",
		},
		{
			name: "not a mapping: left for kustomize to report",
			in:   "- a\n",
			want: "- a\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(withOriginAnnotations([]byte(tt.in))); got != tt.want {
				t.Errorf("withOriginAnnotations() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestIsRemote(t *testing.T) {
	tests := map[string]bool{
		"https://github.com/org/repo//path?ref=v1": true,
		"http://example.com/deploy.yaml":           true,
		"HTTPS://EXAMPLE.COM/x.yaml":               true,
		"ssh://git@example.com/org/repo.git":       true,
		"file:///srv/repo.git":                     true,
		"git::https://example.com/org/repo":        true,
		"git@github.com:org/repo.git":              true,
		"user@example.com:org/repo.git":            true,
		"github.com/org/repo/path":                 true,
		"github.com:org/repo":                      true,
		"../base":                                  false,
		"deploy.yaml":                              false,
		"github.com.yaml":                          false,
		"configs/app.properties":                   false,
		"":                                         false,
		"apiVersion: v1\nkind: X\nurl: https://example.com\n": false,
	}
	for in, want := range tests {
		if got := isRemote(in); got != want {
			t.Errorf("isRemote(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestCheckRemote(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" for no error
	}{
		{in: "resources: [a.yaml, ../base]\nconfigMapGenerator:\n- name: c\n  literals: [url=https://example.com]\n  files: [key=conf.txt]\n"},
		{in: "resources: [https://example.com/a.yaml]\n", want: `resources entry "https://example.com/a.yaml"`},
		{in: "components: [github.com/org/repo/c]\n", want: `components entry "github.com/org/repo/c"`},
		{in: "patches:\n- path: https://example.com/p.yaml\n", want: `patches entry "https://example.com/p.yaml"`},
		{in: "patches:\n- patch: |\n    metadata: {annotations: {u: 'https://example.com'}}\n"},
		{in: "configMapGenerator:\n- name: c\n  files: [key=https://example.com/f]\n", want: `configMapGenerator entry "https://example.com/f"`},
		{in: "secretGenerator:\n- name: s\n  envs: [http://example.com/.env]\n", want: `secretGenerator entry "http://example.com/.env"`},
		{in: "openapi:\n  path: https://example.com/schema.json\n", want: `openapi entry "https://example.com/schema.json"`},
		{in: "bases: [git@github.com:org/repo]\n", want: `bases entry "git@github.com:org/repo"`},
		{in: "not: [valid\n"},
		{
			in:   "transformers:\n- |\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata: {name: p}\n  path: https://example.com/p.yaml\n",
			want: `PatchTransformer path entry "https://example.com/p.yaml"`,
		},
	}
	for _, tt := range tests {
		err := checkRemote([]byte(tt.in))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("checkRemote(%q) = %v, want nil", tt.in, err)
		case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want+" is remote")):
			t.Errorf("checkRemote(%q) = %v, want %s is remote...", tt.in, err, tt.want)
		}
	}
}

func TestKustomizationFile(t *testing.T) {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("resources: []\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := kustomizationFile(dir); got != filepath.Join(dir, name) {
			t.Errorf("kustomizationFile() = %q, want %s", got, name)
		}
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "kustomization.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := kustomizationFile(dir); got != "" {
		t.Errorf("kustomizationFile(dir with a directory called kustomization.yaml) = %q, want none", got)
	}
}

// TestRenderRemoteBuiltinConfig checks that a builtin generator config that
// names a URL is refused before kustomize fetches it: the address is
// unroutable, so a fetch would hang.
func TestRenderRemoteBuiltinConfig(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"kustomization.yaml": "generators: [gen.yaml]\n",
		"gen.yaml":           "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: remote\nfiles:\n- conf=https://192.0.2.1/conf.txt\n",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Render(ctx, dir, DefaultOptions())
	want := `render: gen.yaml: ConfigMapGenerator files entry "https://192.0.2.1/conf.txt" is remote: only files under the root are rendered`
	if err == nil || err.Error() != want {
		t.Errorf("Render() error = %v, want %q", err, want)
	}
	if !errors.Is(err, ErrRemote) {
		t.Errorf("Render() error %v is not ErrRemote", err)
	}
}
