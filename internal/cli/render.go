package cli

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/secret"
)

// SourceAnnotation is the annotation `render --show-source` adds to each
// object: the file and line it came from.
const SourceAnnotation = "snapply.dev/source"

// renderOptions are the flags of `snapply render`.
type renderOptions struct {
	engine.Options
	output      string
	showSource  bool
	showSecrets bool
	offline     bool
}

func newRenderCommand(g *globals) *cobra.Command {
	o := renderOptions{Options: engine.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "render PATH",
		Short: "Print the objects plan and apply would send, for kubeconform, conftest or kubectl",
		Long: `render prints the objects that ` + "`snapply plan PATH`" + ` and ` + "`snapply apply PATH`" + ` would
send to the API server, and changes nothing: rendered from PATH as plan
renders it, with the namespace of --namespace or of the kubeconfig context
filled in where an object has none, checked against the cluster's API
discovery, and labelled as members of the inventory (--name,
--inventory-namespace). They come in the order apply sends them: by wave
(CRDs and Namespaces, prerequisites, workloads, webhooks), then by
namespace, group, kind and name.

--offline reads no cluster: objects are rendered and labelled only, and a
namespaced object without a namespace is printed without one.

Secret values (data, stringData, the kubectl last-applied annotation) are
replaced by the keyed digests a plan shows (<redacted sha256:...>), keyed
with the store file's key when --store exists (so they match that store's
plans), else with a key of this run. --show-secrets prints them as they
are. --show-source adds the annotation ` + SourceAnnotation + ` (file:line).

Exit codes: 0 success; 1 an error (PATH does not render, the cluster
refuses a kind or a namespace).`,
		Example: `  snapply render ./overlays/prod | kubeconform -strict -summary
  snapply render ./overlays/prod -o json | conftest test -
  snapply render ./overlays/prod --offline --show-source
  snapply render ./overlays/prod --show-secrets | kubectl apply --dry-run=server -f -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.output != "yaml" && o.output != "json" {
				return fmt.Errorf("unknown output format %q: want yaml or json", o.output)
			}
			return g.runRender(cmd.Context(), args[0], o)
		},
	}
	d := engine.DefaultOptions()
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "yaml", "output format: yaml or json")
	f.BoolVar(&o.showSource, "show-source", false, "annotate each object with the file and line it came from ("+SourceAnnotation+")")
	f.BoolVar(&o.showSecrets, "show-secrets", false, "print Secret values as they are, not as digests")
	f.BoolVar(&o.offline, "offline", false, "read no cluster: namespaces are not filled in nor kinds checked")
	f.StringVar(&o.StorePath, "store", d.StorePath, "store file whose key digests Secret values, when it exists (it is only read)")
	addStoreKeyFlag(f, &o.StoreKey.Env)
	f.StringVar(&o.Name, "name", d.Name, "inventory name: the objects are labelled as its members")
	f.StringVar(&o.InventoryNamespace, "inventory-namespace", d.InventoryNamespace, "namespace of the inventory")
	f.BoolVar(&o.AllowEmpty, "allow-empty", false, "accept a PATH that renders no object")
	return cmd
}

// runRender renders path and writes the objects.
func (g *globals) runRender(ctx context.Context, path string, o renderOptions) error {
	objs, err := g.newEngine().Render(ctx, engine.Target{Path: path}, o.Options, o.offline)
	if err != nil {
		return err
	}
	redact := func(u *unstructured.Unstructured) *unstructured.Unstructured { return u }
	if !o.showSecrets {
		r, err := renderRedactor(o.StorePath, o.StoreKey)
		if err != nil {
			return err
		}
		redact = r.Redact
	}
	out := make([]*unstructured.Unstructured, len(objs))
	for i, d := range objs {
		u := redact(d.Obj)
		if o.showSource {
			u = withSource(u, d.Source)
		}
		out[i] = u
	}
	if o.output == "json" {
		return writeJSONList(g.io.Out, out)
	}
	for _, u := range out {
		if err := writeYAML(g.io.Out, u); err != nil {
			return err
		}
	}
	return nil
}

// renderRedactor returns the redactor of the store at path when it exists,
// so that digests match its plans; else one with a key of its own.
func renderRedactor(path string, k engine.StoreKey) (*secret.Redactor, error) {
	if _, err := os.Stat(path); err == nil {
		db, err := engine.OpenStore(path, true, k, os.Getenv)
		if err != nil {
			return nil, err
		}
		r := db.Redactor()
		return r, db.Close()
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("store: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return secret.NewRedactor(key), nil
}

// withSource returns a copy of u annotated with its source.
func withSource(u *unstructured.Unstructured, src object.Source) *unstructured.Unstructured {
	c := u.DeepCopy()
	ann := c.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[SourceAnnotation] = src.String()
	c.SetAnnotations(ann)
	return c
}

// writeJSONList writes objs as a v1 List, as kubectl get -o json does.
func writeJSONList(w io.Writer, objs []*unstructured.Unstructured) error {
	items := make([]map[string]any, len(objs))
	for i, u := range objs {
		items[i] = u.Object
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
}
