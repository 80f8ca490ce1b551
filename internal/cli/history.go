package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/report"
	"github.com/snapply/snapply/internal/store"
)

func newHistoryCommand(g *globals) *cobra.Command {
	var storePath, output, keyEnv string
	cmd := &cobra.Command{
		Use:         "history",
		Annotations: map[string]string{offline: "true"},
		Short:       "List the snapshots in a store file",
		Long: `history lists the snapshots of a store file, oldest first: their ID, kind
(before, desired, after), when they were taken, how many objects they hold,
the commit and GitHub Actions run (id/attempt) they came from, and, for the
snapshots of a recorded apply, what the apply did (CHANGES).

The JSON output is a list of the snapshots' metadata; the snapshots of a
recorded apply also have "run": the run's snapshots and outcome counts.`,
		Example: `  snapply history --store snapply.db
  snapply history --store snapply.db -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("unknown output format %q: want text or json", output)
			}
			db, err := openExisting(storePath, keyEnv)
			if err != nil {
				return err
			}
			defer db.Close()
			metas, err := db.Snapshots()
			if err != nil {
				return err
			}
			runs, err := db.Runs()
			if err != nil {
				return err
			}
			entries := history(metas, runs)
			if output == "json" {
				enc := json.NewEncoder(g.io.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(entries)
			}
			return historyTable(g.io.Out, entries)
		},
	}
	cmd.Flags().StringVar(&storePath, "store", store.DefaultPath, "store file")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	addStoreKeyFlag(cmd.Flags(), &keyEnv)
	return cmd
}

// historyEntry is one snapshot as history prints it: its metadata, with
// the same JSON keys as store.Meta, and the run it belongs to, if any.
type historyEntry struct {
	store.Meta
	Run *runSummary `json:"run,omitempty"`
}

// runSummary is a recorded apply in the history: its snapshots and the
// outcomes of its objects, counted.
type runSummary struct {
	Before       string `json:"before"`
	Desired      string `json:"desired"`
	After        string `json:"after"`
	Applied      int    `json:"applied"`
	Unchanged    int    `json:"unchanged"`
	Pruned       int    `json:"pruned"`
	Failed       int    `json:"failed"`
	NotAttempted int    `json:"notAttempted"`
	Interrupted  bool   `json:"interrupted"`
}

// summarizeRun counts the outcomes of a run.
func summarizeRun(r store.Run) *runSummary {
	s := &runSummary{Before: r.Before, Desired: r.Desired, After: r.After, Interrupted: r.Interrupted}
	for _, rec := range r.Records {
		switch apply.Outcome(rec.Outcome) {
		case apply.Applied:
			s.Applied++
		case apply.Unchanged:
			s.Unchanged++
		case apply.Pruned:
			s.Pruned++
		case apply.Failed:
			s.Failed++
		case apply.NotAttempted:
			s.NotAttempted++
		}
	}
	return s
}

// history joins the snapshots with the runs they belong to (as the
// before, desired or after snapshot of the run).
func history(metas []store.Meta, runs []store.Run) []historyEntry {
	bySnapshot := map[string]*runSummary{}
	for _, r := range runs {
		s := summarizeRun(r)
		for _, id := range []string{r.Before, r.Desired, r.After} {
			if id != "" {
				bySnapshot[id] = s
			}
		}
	}
	out := make([]historyEntry, len(metas))
	for i, m := range metas {
		out[i] = historyEntry{Meta: m, Run: bySnapshot[m.ID]}
	}
	return out
}

// historyTable writes the entries as an aligned table.
func historyTable(w io.Writer, entries []historyEntry) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tCREATED\tOBJECTS\tCOMMIT\tRUN\tCHANGES\tSOURCE")
	for _, e := range entries {
		m := e.Meta
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n",
			report.Clean(m.ID), report.Clean(string(m.Kind)), m.Created.UTC().Format(time.RFC3339), m.Count,
			report.Clean(shortCommit(m.Source.Commit)), report.Clean(runCell(m.Source)), describeChanges(e.Run), report.Clean(describeSource(m)))
	}
	return tw.Flush()
}

// shortCommit returns the first 12 characters of a commit SHA, "-" for none.
func shortCommit(c string) string {
	switch {
	case c == "":
		return "-"
	case len(c) > 12:
		return c[:12]
	}
	return c
}

// runCell prints the GitHub Actions run as "id/attempt", "-" for none.
func runCell(s store.Source) string {
	switch {
	case s.RunID == "":
		return "-"
	case s.RunAttempt == "":
		return s.RunID
	}
	return s.RunID + "/" + s.RunAttempt
}

// describeChanges prints what a run did, "3 applied, 1 pruned, 0 failed",
// adding the objects not attempted and an interruption when there are
// any; "-" for a snapshot of no recorded run (a plan's).
func describeChanges(r *runSummary) string {
	if r == nil {
		return "-"
	}
	out := fmt.Sprintf("%d applied, %d pruned, %d failed", r.Applied, r.Pruned, r.Failed)
	if r.NotAttempted > 0 {
		out += fmt.Sprintf(", %d not attempted", r.NotAttempted)
	}
	if r.Interrupted {
		out += " (interrupted)"
	}
	return out
}

// describeSource prints where a snapshot came from, beyond its commit and
// run, in one short cell: the pull request, the snapshot a rollback
// restored, the kubeconfig context; "-" for none.
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
