package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/graph"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/report"
	"github.com/snapply/snapply/internal/store"
)

func newShowCommand(g *globals) *cobra.Command {
	var storePath, keyEnv string
	var managedFields bool
	var output string
	cmd := &cobra.Command{
		Use:         "show SNAPSHOT_ID [REF]",
		Annotations: map[string]string{offline: "true"},
		Short:       "Print the objects of a snapshot as YAML",
		Long: `show prints the objects of a snapshot (a unique prefix of its ID, or
"latest") as a YAML stream, or only the object REF, written as kubectl does
("deployment.apps/web -n prod") or as Kind/namespace/name ("Deployment/prod/web").
Secret values are shown as the keyed digests the store holds.`,
		Example: `  snapply show --store snapply.db latest
  snapply show --store snapply.db 20261121T1430 'deployment.apps/web -n prod'
  snapply show --store snapply.db latest Deployment/prod/web --managed-fields
  snapply show --store snapply.db latest -o html > snapshot.html`,
		Args: cobra.RangeArgs(1, 2),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			switch len(args) {
			case 0:
				return completeSnapshots(cmd, toComplete, allSnapshots)
			case 1:
				return completeRefs(cmd, args[0], toComplete)
			}
			return nil, noFiles
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "yaml" && output != "html" {
				return fmt.Errorf("unknown output format %q: want yaml or html", output)
			}
			var sel *object.Selector
			if len(args) == 2 {
				s, err := object.ParseSelector(args[1])
				if err != nil {
					return err
				}
				sel = &s
			}
			db, err := openExisting(storePath, keyEnv)
			if err != nil {
				return err
			}
			defer db.Close()
			snap, err := db.Snapshot(args[0])
			if err != nil {
				return err
			}
			if output == "html" {
				return writeSnapshotHTML(g.io.Out, db, snap, sel)
			}
			return writeSnapshotYAML(g.io.Out, db, snap, sel, args[len(args)-1], managedFields)
		},
	}
	cmd.Flags().StringVar(&storePath, "store", store.DefaultPath, "store file")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or html (one self-contained page: objects by namespace and kind, managers, graph)")
	cmd.Flags().BoolVar(&managedFields, "managed-fields", false, "include metadata.managedFields: which field manager owns which field")
	addStoreKeyFlag(cmd.Flags(), &keyEnv)
	return cmd
}

func writeYAML(w io.Writer, u *unstructured.Unstructured) error {
	out, err := yaml.Marshal(u.Object)
	if err != nil {
		return fmt.Errorf("%s: %w", object.RefOf(u), err)
	}
	if _, err := io.WriteString(w, "---\n"); err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// writeSnapshotHTML writes the objects of snap (those sel matches, when
// set) as one HTML page.
func writeSnapshotHTML(w io.Writer, db *store.DB, snap *store.Snapshot, sel *object.Selector) error {
	var objs []*unstructured.Unstructured
	for _, e := range snap.Entries {
		if sel != nil && !sel.Matches(e.Ref) {
			continue
		}
		u, err := db.Object(e.ID)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Ref, err)
		}
		objs = append(objs, u)
	}
	m := snap.Meta
	sub := []string{fmt.Sprintf("snapshot %s (%s), taken %s", m.ID, m.Kind, m.Created.UTC().Format("2006-01-02 15:04:05 MST"))}
	if m.Source.Commit != "" {
		sub = append(sub, "commit "+m.Source.Commit)
	}
	v := graph.New(objs).View(graph.ViewOptions{})
	return report.HTMLSnapshot(w, objs, report.HTMLOptions{Title: "snapply snapshot " + m.ID, Subtitle: sub, Graph: v})
}

// writeSnapshotYAML writes the objects of snap that sel (written as ref)
// matches, all when it is nil, as a YAML stream, with their live
// resourceVersion, and their managedFields only when managedFields.
func writeSnapshotYAML(w io.Writer, db *store.DB, snap *store.Snapshot, sel *object.Selector, ref string, managedFields bool) error {
	found := false
	for _, e := range snap.Entries {
		if sel != nil && !sel.Matches(e.Ref) {
			continue
		}
		found = true
		u, err := db.Object(e.ID)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Ref, err)
		}
		if !managedFields {
			u.SetManagedFields(nil)
		}
		if e.ResourceVersion != "" {
			u.SetResourceVersion(e.ResourceVersion)
		}
		if err := writeYAML(w, u); err != nil {
			return err
		}
	}
	if sel != nil && !found {
		return fmt.Errorf("snapshot %s has no object %s", snap.Meta.ID, ref)
	}
	return nil
}
