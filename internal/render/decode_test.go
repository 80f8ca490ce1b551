package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/object"
)

// summary is what a test compares of an object: its identity and source.
func summary(objs []object.Object) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Ref.String()+" @ "+o.Source.String())
	}
	return out
}

func TestDecode(t *testing.T) {
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n" // three lines
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{
			name: "one object",
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
			want: []string{"configmap/a @ f.yaml:1"},
		},
		{
			name: "lines of documents after markers, comments and empty documents",
			in: "# head\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n" + // 3
				"---\n---\n# empty\n---\n\n\n" +
				"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: ns\n" + // 12
				"--- # trailing comment\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n" + // 18
				"...\n---\nnull\n---\n~\n",
			want: []string{"namespace/ns @ f.yaml:3", "configmap/b -n ns @ f.yaml:12", "configmap/c @ f.yaml:18"},
		},
		{
			name: "document on the marker line",
			in:   "--- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n--- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n",
			want: []string{"configmap/a @ f.yaml:1", "configmap/b @ f.yaml:2"},
		},
		{
			name: "only comments",
			in:   "# nothing\n---\n# here\n",
		},
		{
			name: "empty input",
			in:   "",
		},
		{
			name: "List items at their own lines",
			in:   "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: b}\n",
			want: []string{"configmap/a @ f.yaml:4", "secret/b @ f.yaml:7"},
		},
		{
			name: "typed list as kubectl get writes it",
			in:   "apiVersion: apps/v1\nkind: DeploymentList\nmetadata: {resourceVersion: \"1\"}\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: a}\n",
			want: []string{"deployment.apps/a @ f.yaml:5"},
		},
		{
			name: "kind ending in List with a name is an object",
			in:   "apiVersion: example.com/v1\nkind: AllowList\nmetadata: {name: a}\nitems: [x]\n",
			want: []string{"allowlist.example.com/a @ f.yaml:1"},
		},
		{
			name: "empty List",
			in:   "apiVersion: v1\nkind: List\nitems: []\n",
		},
		{
			name: "JSON with tabs",
			in:   "{\n\t\"apiVersion\": \"v1\",\n\t\"kind\": \"ConfigMap\",\n\t\"metadata\": {\"name\": \"j\"}\n}\n",
			want: []string{"configmap/j @ f.yaml:1"},
		},
		{
			name: "merge keys and aliases",
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &n merged\n  labels: &l {a: \"1\"}\ndata:\n  <<: *l\n  name: *n\n",
			want: []string{"configmap/merged @ f.yaml:1"},
		},
		{name: "no kind", in: "apiVersion: v1\nmetadata: {name: a}\n", wantErr: "render: f.yaml:1: object has no kind"},
		{name: "no apiVersion", in: "---\nkind: ConfigMap\nmetadata: {name: a}\n", wantErr: "render: f.yaml:2: ConfigMap has no apiVersion"},
		{name: "invalid apiVersion", in: "apiVersion: a/b/c\nkind: X\nmetadata: {name: a}\n", wantErr: `render: f.yaml:1: X has an invalid apiVersion "a/b/c"`},
		{name: "no name", in: "apiVersion: v1\nkind: ConfigMap\n", wantErr: "render: f.yaml:1: ConfigMap has no metadata.name"},
		{name: "empty name", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"\"}\n", wantErr: "render: f.yaml:1: ConfigMap has no metadata.name"},
		{name: "generateName", in: "apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: run-}\n", wantErr: "render: f.yaml:1: Job has no metadata.name (generateName cannot be applied)"},
		{name: "name not a string", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [a]}\n", wantErr: "render: f.yaml:1: ConfigMap has no metadata.name"},
		{name: "metadata not a mapping", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: a\n", wantErr: "render: f.yaml:1: ConfigMap: metadata is not a mapping"},
		{name: "namespace not a string", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: [x]}\n", wantErr: "render: f.yaml:1: ConfigMap a: metadata.namespace is not a string"},
		{name: "list document", in: "- a\n- b\n", wantErr: "render: f.yaml:1: document is a list, not an object (wrap the items in a kind: List)"},
		{name: "scalar document", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nhello\n", wantErr: "render: f.yaml:5: document is a scalar, not an object"},
		{name: "List item not an object", in: "apiVersion: v1\nkind: List\nitems:\n- 1\n", wantErr: "render: f.yaml:4: document is a scalar, not an object"},
		{name: "List in a List", in: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items: []\n", wantErr: "render: f.yaml:4: a List inside a List is not supported"},
		{name: "List item without a name", in: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n", wantErr: "render: f.yaml:4: ConfigMap has no metadata.name"},
		{name: "tab indentation", in: cm + "---\nb:\n\tc: 2\n", wantErr: "render: f.yaml:6: yaml: found character that cannot start any token"},
		{name: "bad indentation", in: cm + "---\nb:\n  c: 2\n d: 3\n", wantErr: "render: f.yaml:7: yaml: did not find expected key"},
		{name: "unclosed flow sequence", in: cm + "---\nb: [1, 2\nc: 3\n", wantErr: "render: f.yaml:6: yaml: did not find expected ',' or ']'"},
		{name: "unclosed quote", in: "a: 1\nb: \"x\nc: 2\n", wantErr: "render: f.yaml:2: yaml: found unexpected end of stream"},
		{name: "duplicate key", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nkind: Secret\n", wantErr: `render: f.yaml:4: mapping key "kind" already defined at line 2`},
		{name: "infinite number", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: .inf\n", wantErr: "render: f.yaml:4: infinity and NaN are not valid JSON numbers"},
		{name: "bad explicit tag does not print the value", in: "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\nstringData: {password: !!int hunter2}\n", wantErr: "render: f.yaml:4: value is not a valid !!int"},
		{name: "key that is a mapping", in: "{a: 1}: b\n", wantErr: "render: f.yaml:1: mapping key is not a scalar"},
		{name: "merge of a scalar", in: "a: &x 1\nb:\n  <<: *x\n", wantErr: "render: f.yaml:3: merge key (<<) needs a mapping or a list of mappings"},
		{
			name:    "billion laughs",
			in:      "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
			wantErr: "render: f.yaml:1: document expands to too many nodes (excessive aliasing)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := decode("f.yaml", []byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("decode() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decode() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, summary(objs), cmpEmpty); diff != "" {
				t.Errorf("decode() objects (-want +got):\n%s", diff)
			}
		})
	}
}

// cmpEmpty treats a nil and an empty slice alike.
var cmpEmpty = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

// TestDecodeValues checks the values an object holds: JSON types, YAML 1.2
// scalars, timestamps kept as written, merge keys.
func TestDecodeValues(t *testing.T) {
	in := `apiVersion: v1
kind: ConfigMap
metadata:
  name: values
  labels: &labels
    tier: web
    on: yes
spec:
  int: 3
  hex: 0x10
  big: 18446744073709551615
  float: 1.5
  bool: true
  "null": null
  date: 2001-12-14
  quoted: "007"
  binary: !!binary aGVsbG8=
  custom: !Ref thing
  1: number key
  merged:
    <<: *labels
    tier: api
  list: [a, 1, {b: c}]
`
	objs, err := decode("f.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":   "values",
			"labels": map[string]any{"tier": "web", "on": "yes"},
		},
		"spec": map[string]any{
			"int":    int64(3),
			"hex":    int64(16),
			"big":    float64(18446744073709551615),
			"float":  1.5,
			"bool":   true,
			"null":   nil,
			"date":   "2001-12-14",
			"quoted": "007",
			"binary": "aGVsbG8=",
			"custom": "thing",
			"1":      "number key",
			"merged": map[string]any{"tier": "api", "on": "yes"},
			"list":   []any{"a", int64(1), map[string]any{"b": "c"}},
		},
	}
	if diff := cmp.Diff(want, objs[0].Obj.Object); diff != "" {
		t.Errorf("decoded object (-want +got):\n%s", diff)
	}
	// An unstructured object must deep-copy: every value is a JSON type.
	_ = objs[0].Obj.DeepCopy()
}

// FuzzDecode checks that no input makes decode panic, and that every object
// it returns has a kind, a name, and JSON values only.
func FuzzDecode(f *testing.F) {
	for _, pattern := range []string{"testdata/*/*.yaml", "testdata/*/*.json", "testdata/*/*/*.yaml", "../../fixtures/bad/*.yaml", "../../fixtures/bad/*/*.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte("a: &a [x]\nb: [*a, *a]\n<<: {c: *a}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := decode("fuzz.yaml", data)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") {
				t.Fatalf("error is not one line: %q", msg)
			}
			return
		}
		for _, o := range objs {
			if o.Ref.Kind == "" || o.Ref.Name == "" || o.Obj.GetKind() == "" || o.Obj.GetName() == "" {
				t.Fatalf("object without a kind or a name: %+v", o.Ref)
			}
			if o.Source.Line < 1 {
				t.Fatalf("object %s without a line", o.Ref)
			}
			_ = o.Obj.DeepCopy() // panics on a value that is not JSON
		}
	})
}
