package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/report"
	"github.com/snapply/snapply/internal/snapdiff"
	"github.com/snapply/snapply/internal/store"
)

// diffOptions are the flags of `snapply diff`.
type diffOptions struct {
	storePath string
	output    string
	live      bool
	exitCode  bool
}

func newDiffCommand(g *globals) *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff A [B | --live]",
		Short: "Show what changed between two snapshots, or between a snapshot and the live cluster",
		Long: `diff compares the objects of snapshot A with those of snapshot B, or with
the live cluster (--live), by identity (group, kind, namespace, name). A and
B are snapshot IDs, unique prefixes of one, or "latest".

Every object added, removed or changed is listed with a unified YAML diff in
the plan's format: status and server-managed metadata (managedFields,
resourceVersion, generation, uid, creationTimestamp) are left out, so an
object whose only differences are there counts as unchanged. Unchanged
objects are only counted.

With --live, diff reads the objects that A holds from the cluster (the
kubectl-style flags pick it) and shows the drift since A, and for each
changed object the field managers that changed it: those whose
managedFields entry is new since A, or later than in A (their times have
a resolution of one second). Compare against a before or after snapshot:
a desired snapshot holds no server defaults.

Each diff marks its sides with the snapshot IDs, A's first, and
"(live)" for the cluster's side.

Secret values are never shown: the store holds keyed digests, and live
Secrets are digested with the store's key before they are compared, so a
diff still says which keys changed.

Exit codes: 0; with --exit-code, 1 when there are differences (as git diff).`,
		Example: `  snapply diff --store snapply.db 20261121T1430 latest
  snapply diff --store snapply.db latest --live --exit-code
  snapply diff --store snapply.db latest --live --context prod -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.live && len(args) != 1:
				return fmt.Errorf("diff --live takes one snapshot, got %d arguments", len(args))
			case !o.live && len(args) != 2:
				return fmt.Errorf("diff takes two snapshots (A B), or one with --live; got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.output != "text" && o.output != "json" && o.output != "html" {
				return fmt.Errorf("unknown output format %q: want text, json or html", o.output)
			}
			return g.runDiff(cmd.Context(), args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.storePath, "store", store.DefaultPath, "store file")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text, json or html (one self-contained page)")
	f.BoolVar(&o.live, "live", false, "compare snapshot A with the live cluster (drift)")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit 1 when there are differences")
	return cmd
}

func (g *globals) runDiff(ctx context.Context, args []string, o diffOptions) (err error) {
	db, err := openExisting(o.storePath)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	var res report.SnapshotDiff
	if o.live {
		client, cerr := g.client(ctx)
		if cerr != nil {
			return cerr
		}
		res, err = snapdiff.Live(ctx, db, client, args[0], func(line string) { g.progress("%s", line) })
	} else {
		res, err = snapdiff.Snapshots(db, args[0], args[1])
	}
	if err != nil {
		return err
	}
	w := g.io.Out
	if o.output == "html" {
		if err := report.HTMLSnapshotDiff(w, res, report.HTMLOptions{}); err != nil {
			return err
		}
	} else if err := writeReport(w, o.output, func() error { return report.SnapshotDiffJSON(w, res) }, nil,
		func(opts report.TextOptions) error { return report.SnapshotDiffText(w, res, opts) }, g.useColor(w)); err != nil {
		return err
	}
	if o.exitCode && res.Summary.Differs() {
		return &ExitError{Code: 1}
	}
	return nil
}
