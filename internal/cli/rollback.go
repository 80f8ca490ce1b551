package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/restore"
	"github.com/snapply/snapply/internal/store"
)

// rollbackOptions are the flags of `snapply rollback`.
type rollbackOptions struct {
	applyOptions
	to     string
	state  string
	dryRun bool
}

func newRollbackCommand(g *globals) *cobra.Command {
	o := rollbackOptions{applyOptions: applyOptions{Options: engine.DefaultOptions()}}
	cmd := &cobra.Command{
		Use:   "rollback --to SNAPSHOT_ID",
		Short: "Restore the state recorded by a past apply run",
		Long: `rollback restores the state of a run recorded in the store: --to names one of
its snapshots (before, desired or after; a unique prefix of the ID, or
"latest" for the newest run; ` + "`snapply history`" + ` lists them). It then runs as
` + "`snapply apply`" + ` does, with that desired set instead of a rendered PATH: the
same snapshot, plan, lock, waves, prune, wait and record, and the snapshots
it records name the snapshot they restore.

--state desired (the default) applies again what the run applied; objects
the inventory gained since are pruned. --state before restores what the run
changed as it was before it: for each object the run found live, the fields
snapply owned then; objects the run created are pruned, objects it pruned
come back.

Secret values are in the store only as digests, unless the store key
(SNAPPLY_STORE_KEY: 64 hex characters, base64 of 32 bytes, or a passphrase)
was set when the run was recorded: then they are sealed in it, and the same
key restores them. A Secret whose values the store does not hold is left as
it is live, and the rollback says so.

Exit codes as for apply; with --dry-run, as for plan.`,
		Example: `  snapply history --store snapply.db
  snapply rollback --store snapply.db --name prod --to 20261121T1430 --dry-run
  snapply rollback --store snapply.db --name prod --to 20261121T143000Z-8f3a2c
  snapply rollback --store snapply.db --name prod --to latest --state before`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			return g.runRollback(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	addEngineFlags(f, &o.Options)
	f.Lookup("store").Usage = "store file that recorded the run; the rollback is recorded in it too"
	f.Lookup("allow-empty").Usage = "accept a restored set with no object (the rollback then prunes everything the inventory holds)"
	f.StringVar(&o.to, "to", "", "a snapshot of the run to restore: its ID, a unique prefix, or latest (required)")
	f.StringVar(&o.state, "state", string(restore.StateDesired), "what to restore: desired (what the run applied) or before (what it changed, as it was before)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the plan of the rollback and change nothing")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text, markdown or json")
	addDeployFlags(f, &o.deploy, "not in the restored state")
	_ = cmd.MarkFlagRequired("to")
	_ = cmd.RegisterFlagCompletionFunc("to", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeSnapshots(cmd, toComplete, runSnapshots)
	})
	return cmd
}

func (g *globals) runRollback(ctx context.Context, o rollbackOptions) (err error) {
	state, err := restore.ParseState(o.state)
	if err != nil {
		return err
	}
	db, err := engine.OpenStore(o.StorePath, true, o.StoreKey, os.Getenv)
	if err != nil {
		return err
	}
	set, err := restore.FromRun(db, o.to, state)
	// The engine opens the store for writing: bbolt locks the file.
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if len(set.Objects) == 0 && !o.AllowEmpty {
		return fmt.Errorf("snapshot %s: the restored state holds no object: the rollback would prune everything inventory %s/%s holds; pass --allow-empty to do so", set.Restores, o.InventoryNamespace, o.Name)
	}

	commit := set.Run.Source.Commit
	if commit == "" {
		commit = "unknown"
	}
	g.progress("Rollback to snapshot %s (state %s; run of %s, commit %s)", set.Restores, state, set.Run.Created.UTC().Format(time.RFC3339), commit)
	t := engine.Target{Path: "snapshot " + set.Restores, Desired: set.Objects, Restores: set.Restores, Keep: make(map[object.Key]bool, len(set.Kept))}
	for _, ref := range set.Kept {
		t.Keep[ref.Key()] = true
		fmt.Fprintf(g.io.Err, "%s: values not in the store (no %s when it was recorded): left as it is live\n", ref, store.KeyEnv)
	}
	if !o.dryRun {
		return g.runApply(ctx, t, o.applyOptions)
	}
	p, err := g.newEngine().Plan(ctx, t, o.Options)
	if p != nil {
		defer func() { err = errors.Join(err, p.Close()) }()
	}
	if err != nil {
		return err
	}
	if err := g.writePlan(g.io.Out, p.Plan, o.output, ""); err != nil {
		return err
	}
	return planExit(p.Plan, false)
}
