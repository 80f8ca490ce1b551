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
	keyEnv    string
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

Exit codes, as kubectl diff's: 0 no differences (or differences without
--exit-code); 1 differences, with --exit-code; 2 an error (a bad flag or
argument, a missing store file, an unknown snapshot, an unreachable
cluster).`,
		Example: `  snapply diff --store snapply.db 20261121T1430 latest
  snapply diff --store snapply.db latest --live --exit-code
  snapply diff --store snapply.db latest --live --context prod -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.live && len(args) != 1:
				return diffError(fmt.Errorf("diff --live takes one snapshot, got %d arguments", len(args)))
			case !o.live && len(args) != 2:
				return diffError(fmt.Errorf("diff takes two snapshots (A B), or one with --live; got %d arguments", len(args)))
			}
			return nil
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) >= 2 || (o.live && len(args) == 1) {
				return nil, noFiles
			}
			return completeSnapshots(cmd, toComplete, allSnapshots)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.output != "text" && o.output != "json" && o.output != "html" {
				return diffError(fmt.Errorf("unknown output format %q: want text, json or html", o.output))
			}
			return diffError(g.runDiff(cmd.Context(), args, o))
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return diffError(err) })
	f := cmd.Flags()
	f.StringVar(&o.storePath, "store", store.DefaultPath, "store file")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text, json or html (one self-contained page)")
	f.BoolVar(&o.live, "live", false, "compare snapshot A with the live cluster (drift)")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit 1 when there are differences (errors exit 2)")
	addStoreKeyFlag(f, &o.keyEnv)
	return cmd
}

// diffErrorCode is the exit code of a diff that failed: kubectl diff's
// "greater than 1", so that 1 always means "there are differences".
const diffErrorCode = 2

// diffError gives err, unless it already carries an exit code, diff's exit
// code for errors.
func diffError(err error) error {
	var exit *ExitError
	if err == nil || errors.As(err, &exit) {
		return err
	}
	return &ExitError{Code: diffErrorCode, Err: err}
}

func (g *globals) runDiff(ctx context.Context, args []string, o diffOptions) (err error) {
	db, err := openExisting(o.storePath, o.keyEnv)
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
