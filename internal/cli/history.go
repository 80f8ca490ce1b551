package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/store"
)

func newHistoryCommand(g *globals) *cobra.Command {
	var storePath, output string
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List the snapshots in a store file",
		Example: `  snapply history --store snapply.db
  snapply history --store snapply.db -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("unknown output format %q: want text or json", output)
			}
			db, err := openExisting(storePath)
			if err != nil {
				return err
			}
			defer db.Close()
			metas, err := db.Snapshots()
			if err != nil {
				return err
			}
			if output == "json" {
				if metas == nil {
					metas = []store.Meta{}
				}
				enc := json.NewEncoder(g.io.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(metas)
			}
			tw := tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tKIND\tCREATED\tOBJECTS\tSOURCE")
			for _, m := range metas {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", m.ID, m.Kind, m.Created.UTC().Format(time.RFC3339), m.Count, describeSource(m))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&storePath, "store", "snapply.db", "store file")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// openExisting opens a store that must already exist, read-only.
func openExisting(path string) (*store.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	opts := store.DefaultOptions()
	opts.ReadOnly = true
	return store.Open(path, opts)
}

// describeSource prints where a snapshot came from in one short cell.
func describeSource(m store.Meta) string {
	s := m.Source
	out := ""
	add := func(k, v string) {
		if v == "" {
			return
		}
		if out != "" {
			out += " "
		}
		out += k + v
	}
	if len(s.Commit) > 12 {
		add("commit ", s.Commit[:12])
	} else {
		add("commit ", s.Commit)
	}
	if s.RunID != "" {
		add("run ", s.RunID+"/"+s.RunAttempt)
	}
	if s.PR > 0 {
		add("PR #", fmt.Sprint(s.PR))
	}
	add("restores ", s.Restores)
	add("context ", m.Cluster.Context)
	if out == "" {
		out = "-"
	}
	return out
}
