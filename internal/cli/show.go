package cli

import (
	"fmt"
	"github.com/snapply/snapply/internal/store"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/object"
)

func newShowCommand(g *globals) *cobra.Command {
	var storePath, keyEnv string
	var managedFields bool
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
  snapply show --store snapply.db latest Deployment/prod/web --managed-fields`,
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
				if err := writeYAML(g.io.Out, u); err != nil {
					return err
				}
			}
			if sel != nil && !found {
				return fmt.Errorf("snapshot %s has no object %s", snap.Meta.ID, args[1])
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&storePath, "store", store.DefaultPath, "store file")
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
