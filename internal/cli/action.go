package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"
	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/action"
	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/github"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/render"
	"github.com/snapply/snapply/internal/report"
	"github.com/snapply/snapply/internal/restore"
)

func newActionCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "action",
		Short: "Run as a GitHub Actions step (reads the INPUT_* and GITHUB_* environment)",
		Long: `action is the entrypoint of the snapply container action. It reads the
action's inputs and the event, and plans (pull_request), applies (push to the
default branch) or does nothing with a notice. It writes the job summary, the
step outputs and a sticky pull-request comment, and annotates invalid
manifests. See action.yml for the inputs and outputs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a := githubactions.New(githubactions.WithWriter(g.io.Out))
			err := g.runAction(cmd.Context(), a)
			var exit *ExitError
			if err != nil && !(errors.As(err, &exit) && exit.Err == nil) {
				// One annotation for the cause; the exit code says the rest.
				a.Errorf("%s", oneLine(err.Error()))
				return &ExitError{Code: ExitCode(err)}
			}
			return err
		},
	}
}

// runAction runs one action step.
func (g *globals) runAction(ctx context.Context, a *githubactions.Action) error {
	cfg, err := action.Load(a)
	if err != nil {
		return err
	}
	outputs := action.Outputs{StorePath: cfg.Inputs.Store, ArtifactName: cfg.ArtifactName()}
	switch cfg.Mode {
	case action.ModeNone:
		a.Noticef("%s", cfg.Notice)
		outputs.StorePath, outputs.ArtifactName = "", ""
		return action.SetOutputs(a, outputs)
	}

	kubeconfig, cleanup, err := action.WriteKubeconfig(a, cfg.Inputs.Kubeconfig)
	if err != nil {
		return err
	}
	defer cleanup()
	if kubeconfig != "" {
		g.kube.KubeConfig = &kubeconfig
	}
	if cfg.Inputs.Context != "" {
		g.kube.Context = &cfg.Inputs.Context
	}
	path := cfg.Inputs.Path
	if !filepath.IsAbs(path) && cfg.Event.Workspace != "" {
		path = filepath.Join(cfg.Event.Workspace, path)
	}
	o := applyOptions{
		prepareOptions: prepareOptions{
			storePath:   cfg.StoreFile(),
			scope:       cfg.Inputs.Scope,
			force:       cfg.Inputs.ForceConflicts,
			name:        cfg.Inputs.Name,
			inventoryNS: cfg.Inputs.InventoryNamespace,
			onRender:    func(objs []object.Object) { action.Mask(a, objs) },
		},
		output:           "text",
		prune:            cfg.Inputs.Prune,
		wait:             cfg.Inputs.Wait,
		timeout:          cfg.Inputs.Timeout,
		allowDestructive: cfg.Inputs.AllowDestructive,
	}
	if cfg.Mode != action.ModePlan {
		o.lock, o.lockWait = true, cfg.Inputs.Timeout
	}
	g.color = "never" // the log is no terminal
	gh, ghErr := github.NewClient(cfg.Inputs.GitHubToken, cfg.Event.APIURL, cfg.Event.Repository)
	title := fmt.Sprintf("snapply %s for `%s`", cfg.Mode, cfg.Inputs.Name)
	var restored *restore.Set
	if cfg.Mode == action.ModeRollback {
		if ghErr != nil {
			return fmt.Errorf("rollback-to %s: %w", cfg.Inputs.RollbackTo, ghErr)
		}
		if restored, err = g.fetchRollback(ctx, a, cfg, gh); err != nil {
			return err
		}
		o.desired, o.restores = restored.Objects, restored.Restores
		o.keep = map[object.Key]bool{}
		for _, ref := range restored.Kept {
			o.keep[ref.Key()] = true
			a.Warningf("%s: its values are not in the store (no SNAPPLY_STORE_KEY when it was recorded): left as it is live", ref)
		}
		outputs.Rollback = true
		title = fmt.Sprintf("snapply rollback to run %s for `%s`", cfg.Inputs.RollbackTo, cfg.Inputs.Name)
		path = "snapshot " + restored.Restores
	}

	var p *prepared
	err = action.Group(a, "snapply "+string(cfg.Mode)+": render, snapshot, plan", func() error {
		var err error
		p, err = g.prepare(ctx, path, o.prepareOptions)
		if err == nil {
			err = g.render(g.io.Out, p.plan, "text")
		}
		return err
	})
	if p != nil {
		defer p.close()
	}
	if err != nil {
		var rerr *render.Error
		if errors.As(err, &rerr) && rerr.Source.File != "" {
			fields := map[string]string{"file": rerr.Source.File, "title": "snapply: cannot render"}
			if rerr.Source.Line > 0 {
				fields["line"] = strconv.Itoa(rerr.Source.Line)
			}
			a.WithFieldsMap(fields).Errorf("%s", oneLine(rerr.Error()))
			return &ExitError{Code: 1}
		}
		return err
	}
	action.Annotate(a, p.plan)
	outputs.HasChanges = p.plan.HasChanges()
	outputs.Summary = p.plan.Summary
	outputs.SnapshotID = p.before.ID

	comment := func(pr int, key string, parts []string) {
		if !cfg.Inputs.Comment || pr == 0 {
			return
		}
		if ghErr != nil {
			a.Warningf("no pull-request comment: %v", ghErr)
			return
		}
		res, err := gh.UpsertComment(ctx, pr, key, parts)
		if err != nil {
			a.Warningf("no pull-request comment on #%d: %s", pr, oneLine(err.Error()))
			return
		}
		outputs.CommentURL = res.URL
		g.progress("comment %s: %d created, %d updated, %d unchanged, %d deleted", res.URL, res.Created, res.Updated, res.Unchanged, res.Deleted)
	}

	if cfg.Mode == action.ModePlan {
		mdOpts := report.MarkdownOptions{Title: title, Details: true}
		var full bytes.Buffer
		if err := report.Markdown(&full, p.plan, mdOpts); err != nil {
			return err
		}
		if err := action.WriteSummary(a, full.String()); err != nil {
			return err
		}
		// The comment leaves out the snapshot ID, which changes on every
		// run: an unchanged plan must leave the comment unchanged.
		stable := *p.plan
		stable.Snapshot = ""
		parts, err := report.SplitMarkdown(&stable, mdOpts, github.Budget(cfg.Inputs.Name))
		if err != nil {
			return err
		}
		comment(cfg.Event.PR, cfg.Inputs.Name, parts)
		if err := action.SetOutputs(a, outputs); err != nil {
			return err
		}
		return planExit(p.plan, false)
	}

	isRollback, liveCommit := rerun(cfg.Event, p.inv)
	if isRollback && restored == nil {
		line := rollbackLine(liveCommit, cfg.Event.SHA)
		a.Noticef("this run is a %s (a re-run of an older apply)", line)
		outputs.Rollback = true
		title = fmt.Sprintf("snapply %s for `%s`", line, cfg.Inputs.Name)
	}

	var res *apply.Result
	var recErr error
	err = action.Group(a, "snapply apply: waves, prune, wait, record", func() error {
		res, recErr = g.deploy(ctx, p, o)
		if res == nil {
			return recErr
		}
		return g.renderResult(g.io.Out, res, "text")
	})
	if err != nil {
		_ = action.SetOutputs(a, outputs)
		return err
	}
	ropts := report.MarkdownOptions{Title: title, Details: true}
	var full bytes.Buffer
	if err := report.ResultMarkdown(&full, res, ropts); err != nil {
		return err
	}
	if err := action.WriteSummary(a, full.String()); err != nil {
		return err
	}
	pr, sha := cfg.Event.PR, cfg.Event.SHA
	if restored != nil {
		// A rollback reports to the pull request that brought the state
		// it restores.
		pr, sha = 0, restored.Run.Source.Commit
	}
	if pr == 0 && sha != "" && ghErr == nil && cfg.Inputs.Comment {
		if pr, err = gh.MergedPullRequest(ctx, sha); err != nil {
			a.Warningf("cannot find the pull request of %s: %s", sha, oneLine(err.Error()))
		}
	}
	ropts.MaxBytes = github.Budget(cfg.Inputs.Name + ":apply")
	var short bytes.Buffer
	if err := report.ResultMarkdown(&short, res, ropts); err != nil {
		return err
	}
	comment(pr, cfg.Inputs.Name+":apply", []string{short.String()})
	if err := action.SetOutputs(a, outputs); err != nil {
		return err
	}
	return applyExit(res, recErr)
}

// fetchRollback downloads the store artifact of the run to roll back to,
// makes it the workspace's store (unless the workspace already has one, so
// that history accumulates), and returns the desired set of the newest run
// it recorded: the apply of that run.
func (g *globals) fetchRollback(ctx context.Context, a *githubactions.Action, cfg *action.Config, gh *github.Client) (*restore.Set, error) {
	runID, err := strconv.ParseInt(cfg.Inputs.RollbackTo, 10, 64)
	if err != nil || runID <= 0 {
		return nil, fmt.Errorf("rollback-to %q: want the ID of a workflow run (the number in its URL)", cfg.Inputs.RollbackTo)
	}
	// The artifact names of that run: snapply-NAME-RUNID-ATTEMPT.
	past := *cfg
	past.Event.RunID, past.Event.RunAttempt = cfg.Inputs.RollbackTo, "1"
	prefix := strings.TrimSuffix(past.ArtifactName(), "1")
	dir, err := os.MkdirTemp("", "snapply-rollback-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	downloaded, err := gh.DownloadRunArtifact(ctx, runID, "", prefix, dir)
	if err != nil {
		return nil, fmt.Errorf("rollback-to %d: %w", runID, err)
	}
	g.progress("downloaded the store of run %d", runID)
	db, err := openStore(downloaded, true)
	if err != nil {
		return nil, fmt.Errorf("rollback-to %d: %w", runID, err)
	}
	set, err := restore.FromRun(db, "latest", restore.StateDesired)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("rollback-to %d: %w", runID, err)
	}
	if len(set.Objects) == 0 {
		return nil, fmt.Errorf("rollback-to %d: the run applied no object; refusing to prune everything", runID)
	}
	if _, err := os.Stat(cfg.StoreFile()); errors.Is(err, os.ErrNotExist) {
		if err := copyFile(downloaded, cfg.StoreFile()); err != nil {
			return nil, err
		}
	}
	a.Noticef("rollback to run %d: restores snapshot %s (commit %s)", runID, set.Restores, set.Run.Source.Commit)
	return set, nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

// rerun tells whether an apply run rolls the cluster back: a re-run of a
// run (attempt above 1), or a run older than the one that last applied to
// this inventory (run IDs grow). It returns the commit the inventory says
// is live (may be empty).
func rerun(ev action.Event, inv *apply.Inventory) (bool, string) {
	live := inv.Annotations[apply.LastCommitAnnotation]
	if attempt, err := strconv.Atoi(ev.RunAttempt); err == nil && attempt > 1 {
		return true, live
	}
	last, err1 := strconv.ParseInt(inv.Annotations[apply.LastRunIDAnnotation], 10, 64)
	this, err2 := strconv.ParseInt(ev.RunID, 10, 64)
	return err1 == nil && err2 == nil && this < last, live
}

// rollbackLine says what a rollback run does, in one line.
func rollbackLine(live, to string) string {
	short := func(c string) string {
		if len(c) > 12 {
			return c[:12]
		}
		if c == "" {
			return "an unknown commit"
		}
		return c
	}
	return fmt.Sprintf("rollback from %s to %s", short(live), short(to))
}
