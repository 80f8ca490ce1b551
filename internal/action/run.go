package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/github"
	"github.com/snapply/snapply/internal/graph"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/policy"
	"github.com/snapply/snapply/internal/render"
	"github.com/snapply/snapply/internal/report"
	"github.com/snapply/snapply/internal/restore"
	"github.com/snapply/snapply/internal/store"
)

// Commenter is what a run needs of GitHub: the sticky comment, the pull
// request a pushed commit came from, a past run's store artifact, and the
// drift issue of an environment.
// *github.Client satisfies it.
type Commenter interface {
	UpsertComment(ctx context.Context, number int, key string, parts []string) (github.CommentResult, error)
	MergedPullRequest(ctx context.Context, sha string) (int, error)
	DownloadRunArtifact(ctx context.Context, runID int64, name, prefix, dstDir string) (string, error)
	CommentBody(ctx context.Context, number int, key string) (string, bool, error)
	FindOpenIssue(ctx context.Context, label, marker string) (github.Issue, bool, error)
	CreateIssue(ctx context.Context, title, body string, labels []string) (github.Issue, error)
	EditIssueBody(ctx context.Context, number int, body string) error
	CommentOnIssue(ctx context.Context, number int, body string) error
	CloseIssue(ctx context.Context, number int) error
}

// Deps are what Run is given by the command layer.
type Deps struct {
	// NewEngine returns the engine for the kubeconfig file (empty: the
	// runner's own) and context (empty: its current one).
	NewEngine func(kubeconfig, context string) *engine.Engine
	// GitHub talks to the REST API; nil with GitHubErr saying why.
	GitHub    Commenter
	GitHubErr error
	// Log is the step's log (the plan and result as text).
	Log io.Writer
	// Progress prints one progress line to the log.
	Progress func(format string, args ...any)
}

// ExitError carries the exit code of a run; Err is nil when the cause was
// already reported (as an annotation).
type ExitError struct {
	Code int
	Err  error
}

// Error implements error.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns the cause.
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode returns the code.
func (e *ExitError) ExitCode() int { return e.Code }

// run is one action step.
type run struct {
	a       *githubactions.Action
	cfg     *Config
	deps    Deps
	outputs Outputs
	title   string
	// key is the store key, read once by readKey (a passphrase costs an
	// scrypt); nil for none.
	key  []byte
	temp []string // directories removed when the step ends
}

// Run runs one action step: it plans (pull_request), applies (push to the
// default branch), rolls back or retries, and reports through the job
// summary, the step outputs and a sticky pull-request comment.
func Run(ctx context.Context, a *githubactions.Action, cfg *Config, deps Deps) error {
	r := &run{a: a, cfg: cfg, deps: deps}
	r.outputs = Outputs{StorePath: cfg.Inputs.Store, ArtifactName: cfg.ArtifactName()}
	if cfg.Mode == ModeNone {
		a.Noticef("%s", cfg.Notice)
		r.outputs.StorePath, r.outputs.ArtifactName = "", ""
		return SetOutputs(a, r.outputs)
	}
	if err := r.readKey(); err != nil {
		return err
	}
	r.decideUpload()
	kubeconfig, cleanup, err := WriteKubeconfig(a, cfg.Inputs.Kubeconfig)
	if err != nil {
		return err
	}
	defer cleanup()
	eng := deps.NewEngine(kubeconfig, cfg.Inputs.Context)
	eng.Records = r.lastApplyStore
	defer r.removeTemp()
	return r.run(ctx, eng)
}

func (r *run) run(ctx context.Context, eng *engine.Engine) error {
	cfg := r.cfg
	path := cfg.Inputs.Path
	if !filepath.IsAbs(path) && cfg.Event.Workspace != "" {
		path = filepath.Join(cfg.Event.Workspace, path)
	}
	target := engine.Target{Path: path, OnRender: func(objs []object.Object) { Mask(r.a, objs) }}
	r.title = fmt.Sprintf("snapply %s for `%s`", cfg.Mode, cfg.Inputs.Name)
	if cfg.Mode == ModeDrift {
		return r.drift(ctx, eng, target)
	}
	var restored *restore.Set
	if cfg.Mode == ModeRollback {
		var err error
		if restored, err = r.fetchRollback(ctx); err != nil {
			return err
		}
		target.Path, target.Desired, target.Restores = "snapshot "+restored.Restores, restored.Objects, restored.Restores
		target.Keep = map[object.Key]bool{}
		for _, ref := range restored.Kept {
			target.Keep[ref.Key()] = true
			r.a.Warningf("%s: its values are not in the store (no SNAPPLY_STORE_KEY when it was recorded): left as it is live", ref)
		}
		r.outputs.Rollback = true
		r.title = fmt.Sprintf("snapply rollback to run %s for `%s`", cfg.Inputs.RollbackTo, cfg.Inputs.Name)
	}

	p, err := r.prepare(ctx, eng, target)
	if p != nil {
		defer p.Close()
	}
	if err != nil {
		return err
	}
	Annotate(r.a, p.Plan)
	r.outputs.HasChanges = p.Plan.HasChanges()
	r.outputs.Summary = p.Plan.Summary
	r.outputs.SnapshotID = p.Before.ID
	r.writePlanHTML(p)
	if cfg.Mode == ModePlan {
		if err := r.reportPlan(ctx, p.Plan, r.changeView(p), r.review(p)); err != nil {
			return err
		}
		return r.failOn(p.Plan, "the plan is reported")
	}
	if err := r.failOn(p.Plan, "nothing was applied"); err != nil {
		_ = SetOutputs(r.a, r.outputs)
		return err
	}
	if restored == nil {
		kind := ClassifyApply(cfg.Event, p.Inventory)
		if kind.Kind != KindApply {
			r.a.Noticef("this run is a %s", kind.Line)
			r.outputs.Rollback = kind.Kind == KindRollback
			r.title = fmt.Sprintf("snapply %s for `%s`", kind.Line, cfg.Inputs.Name)
		}
	}
	var reviewed string
	if restored == nil {
		var ok bool
		if reviewed, ok = r.checkReviewed(ctx, p); !ok {
			return r.refuseUnreviewed(ctx, reviewed)
		}
	}
	return r.deploy(ctx, p, restored, reviewed)
}

// failOn fails the run when the plan has risks of the kinds of the
// fail-on input, with an error annotation that names them.
func (r *run) failOn(p *plan.Plan, what string) error {
	hit := p.RisksOf(r.cfg.Inputs.FailOn)
	if len(hit) == 0 {
		return nil
	}
	kinds := make([]string, len(hit))
	for i, k := range hit {
		kinds[i] = string(k)
	}
	msg := fmt.Sprintf("the plan has risks that the fail-on input names (%s); %s", strings.Join(kinds, ", "), what)
	r.a.Errorf("%s", msg)
	return &ExitError{Code: 1, Err: errors.New(msg)}
}

// options are the engine's options from the inputs.
func (r *run) options() engine.Options {
	in := r.cfg.Inputs
	o := engine.DefaultOptions()
	o.StorePath = r.cfg.StoreFile()
	o.Scope = in.Scope
	o.ForceConflicts = in.ForceConflicts
	o.Revalidate = in.Revalidate
	o.Name = in.Name
	o.InventoryNamespace = in.InventoryNamespace
	o.StoreKey = r.storeKey()
	if in.Policy != "" {
		o.PolicyDir = in.Policy
		if !filepath.IsAbs(o.PolicyDir) && r.cfg.Event.Workspace != "" {
			o.PolicyDir = filepath.Join(r.cfg.Event.Workspace, o.PolicyDir)
		}
	}
	return o
}

// readKey reads the run's store key: the store-key input, else the
// SNAPPLY_STORE_KEY variable.
func (r *run) readKey() error {
	k := engine.StoreKey{Env: store.KeyEnv}
	getenv := r.a.Getenv
	if v := r.cfg.Inputs.StoreKey; v != "" {
		k.Env, getenv = "input "+InputStoreKey, func(string) string { return v }
	}
	key, err := k.Read(getenv)
	r.key = key
	return err
}

// storeKey is the run's store key, for the engine.
func (r *run) storeKey() engine.StoreKey {
	return engine.StoreKey{Given: true, Key: r.key, Hint: "set the store-key input, from a secret, to the key it was written with"}
}

// StoreNotKept says why the store of a public repository without a store
// key is not uploaded, and how to keep it.
const StoreNotKept = "The store was not uploaded: this repository is public and no `store-key` is set, so anyone could download every object of the managed namespaces from the artifact. " +
	"Set the `store-key` input from a secret to upload it encrypted, or `allow-public-store: true` to accept the exposure. Until then, `rollback-to` cannot restore this run."

// decideUpload sets the upload-store output: the store of a public
// repository leaves the runner only encrypted, or when allowed; otherwise
// a warning and a line of the job summary say why and how.
func (r *run) decideUpload() {
	r.outputs.UploadStore = true
	if !r.cfg.Event.Public || r.cfg.Inputs.AllowPublicStore || r.key != nil {
		return
	}
	r.outputs.UploadStore, r.outputs.ArtifactName = false, ""
	r.a.Warningf("%s", strings.ReplaceAll(StoreNotKept, "`", ""))
	if err := WriteSummary(r.a, "> [!WARNING]\n> "+StoreNotKept+"\n"); err != nil {
		r.a.Warningf("job summary: %s", OneLine(err.Error()))
	}
}

// prepare renders, snapshots and plans in a log group, and annotates a
// manifest that does not render at its file and line.
func (r *run) prepare(ctx context.Context, eng *engine.Engine, t engine.Target) (*engine.Prepared, error) {
	var p *engine.Prepared
	err := Group(r.a, "snapply "+string(r.cfg.Mode)+": render, snapshot, plan", func() error {
		var err error
		if r.cfg.Mode == ModePlan {
			p, err = eng.Plan(ctx, t, r.options())
		} else {
			p, err = eng.PrepareApply(ctx, t, r.options(), r.cfg.Inputs.Timeout)
		}
		if err == nil {
			err = report.Text(r.deps.Log, p.Plan, report.DefaultTextOptions())
		}
		return err
	})
	return p, r.annotateRender(err)
}

// annotateRender annotates a manifest that does not render, and a policy
// that does not compile, at its file and line; other errors are returned
// as they are.
func (r *run) annotateRender(err error) error {
	var rerr *render.Error
	if errors.As(err, &rerr) && rerr.Source.File != "" {
		fields := map[string]string{"file": rerr.Source.File, "title": "snapply: cannot render"}
		if rerr.Source.Line > 0 {
			fields["line"] = strconv.Itoa(rerr.Source.Line)
		}
		r.a.WithFieldsMap(fields).Errorf("%s", OneLine(rerr.Error()))
		return &ExitError{Code: 1}
	}
	var perr *policy.Error
	if errors.As(err, &perr) && perr.File != "" {
		file := perr.File
		if rel, rerr := filepath.Rel(r.cfg.Event.Workspace, file); r.cfg.Event.Workspace != "" && rerr == nil && !strings.HasPrefix(rel, "..") {
			file = rel
		}
		fields := map[string]string{"file": file, "title": "snapply: policy does not compile"}
		if perr.Line > 0 {
			fields["line"] = strconv.Itoa(perr.Line)
		}
		r.a.WithFieldsMap(fields).Errorf("%s", OneLine(perr.Message))
		return &ExitError{Code: 1}
	}
	return err
}

// changeView is the graph of the plan comment, or nil without a graph.
func (r *run) changeView(p *engine.Prepared) *graph.View {
	if p.Graph() == nil {
		return nil
	}
	return plan.ChangeView(p.Graph(), p.Plan, MaxGraphNodes)
}

// MaxGraphNodes is the most objects the graph of a plan comment draws.
const MaxGraphNodes = 40

// graphLink says where the full graph of the run is: the HTML plan in the
// run's artifacts when it is uploaded, else (empty) `snapply graph`.
func (r *run) graphLink() string {
	if u := r.cfg.RunURL(); u != "" && r.uploadsPlanHTML() {
		return "the full graph is in the HTML plan among [the run's artifacts](" + u + "#artifacts)"
	}
	return ""
}

// reportPlan writes the plan to the job summary and the sticky comment.
func (r *run) reportPlan(ctx context.Context, pl *plan.Plan, view *graph.View, review Review) error {
	mdOpts := report.MarkdownOptions{Title: r.title, Details: true, Header: r.header(r.cfg.Event.HeadSHA), Graph: view, GraphLink: r.graphLink()}
	var full bytes.Buffer
	if err := report.Markdown(&full, pl, mdOpts); err != nil {
		return err
	}
	if err := WriteSummary(r.a, full.String()); err != nil {
		return err
	}
	// The comment leaves out the snapshot ID, which changes on every run.
	stable := *pl
	stable.Snapshot = ""
	// The first part carries the review of the plan, for the apply on merge.
	marker := review.Marker() + "\n"
	parts, err := report.SplitMarkdown(&stable, mdOpts, github.Budget(r.cfg.Inputs.Name)-len(marker))
	if err != nil {
		return err
	}
	parts[0] = marker + parts[0]
	r.comment(ctx, r.cfg.Event.PR, CommentKey(r.cfg.Inputs.Name, ModePlan), parts)
	if err := SetOutputs(r.a, r.outputs); err != nil {
		return err
	}
	if pl.HasErrors() {
		return &ExitError{Code: 1, Err: fmt.Errorf("plan has %d conflicts and %d invalid objects", pl.Summary.Conflict, pl.Summary.Invalid)}
	}
	if err := pl.PolicyError(); err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	return nil
}

// deploy applies, then reports to the summary and the merged pull request.
func (r *run) deploy(ctx context.Context, p *engine.Prepared, restored *restore.Set, reviewed string) error {
	var res *apply.Result
	var recErr error
	err := Group(r.a, "snapply apply: waves, prune, wait, record", func() error {
		res, recErr = p.Deploy(ctx, r.deployOptions())
		if res == nil {
			return recErr
		}
		return report.ResultText(r.deps.Log, res, report.DefaultTextOptions())
	})
	if err != nil {
		_ = SetOutputs(r.a, r.outputs)
		return err
	}
	pr, sha := r.cfg.Event.PR, r.cfg.Event.SHA
	if restored != nil {
		// A rollback reports to the pull request that brought the state
		// it restores.
		pr, sha = 0, restored.Run.Source.Commit
	}
	ropts := report.MarkdownOptions{Title: r.title, Details: true, Header: joinLines(r.header(sha), reviewed)}
	var full bytes.Buffer
	if err := report.ResultMarkdown(&full, res, ropts); err != nil {
		return err
	}
	if err := WriteSummary(r.a, full.String()); err != nil {
		return err
	}
	if pr == 0 && sha != "" && r.deps.GitHub != nil && r.cfg.Inputs.Comment {
		if pr, err = r.deps.GitHub.MergedPullRequest(ctx, sha); err != nil {
			r.a.Warningf("cannot find the pull request of %s: %s", sha, OneLine(err.Error()))
		}
	}
	ropts.MaxBytes = github.Budget(CommentKey(r.cfg.Inputs.Name, ModeApply))
	var short bytes.Buffer
	if err := report.ResultMarkdown(&short, res, ropts); err != nil {
		return err
	}
	r.comment(ctx, pr, CommentKey(r.cfg.Inputs.Name, ModeApply), []string{short.String()})
	if err := SetOutputs(r.a, r.outputs); err != nil {
		return err
	}
	if recErr != nil {
		return fmt.Errorf("apply: recording the outcome: %w", recErr)
	}
	if !res.OK() {
		s := res.Summary
		what := "apply failed"
		if res.Interrupted {
			what = "apply interrupted"
		}
		return &ExitError{Code: 1, Err: fmt.Errorf("%s: %d failed, %d not attempted, %d not ready", what, s.Failed, s.NotAttempted, s.NotReady)}
	}
	return nil
}

func (r *run) deployOptions() engine.DeployOptions {
	in := r.cfg.Inputs
	return engine.DeployOptions{Prune: in.Prune, Wait: in.Wait, Timeout: in.Timeout, AllowDestructive: in.AllowDestructive}
}

// comment upserts the sticky comment key on pull request pr, when comments
// are on and there is a pull request; a failure is a warning.
func (r *run) comment(ctx context.Context, pr int, key string, parts []string) {
	if !r.cfg.Inputs.Comment || pr == 0 {
		return
	}
	if r.deps.GitHub == nil {
		r.a.Warningf("no pull-request comment: %v", r.deps.GitHubErr)
		return
	}
	res, err := r.deps.GitHub.UpsertComment(ctx, pr, key, parts)
	if err != nil {
		r.a.Warningf("no pull-request comment on #%d: %s", pr, OneLine(err.Error()))
		return
	}
	r.outputs.CommentURL = res.URL
	r.deps.Progress("comment %s: %d created, %d updated, %d unchanged, %d deleted", res.URL, res.Created, res.Updated, res.Unchanged, res.Deleted)
}

// review returns the review of a plan: what its comment records.
func (r *run) review(p *engine.Prepared) Review {
	return ReviewOf(p.Plan, p.Desired, r.key)
}

// checkReviewed compares the plan with the one reviewed in the pull
// request the pushed commit came from, and says so in a line for the
// reports, the log and the reviewed-plan output. It reports false when
// the plan must not be applied (require-reviewed-plan).
func (r *run) checkReviewed(ctx context.Context, p *engine.Prepared) (string, bool) {
	require := r.cfg.Inputs.RequireReviewedPlan
	if r.deps.GitHub == nil {
		if require {
			r.outputs.ReviewedPlan = "missing"
			return fmt.Sprintf("**Not applied:** no reviewed plan could be read (%v).", r.deps.GitHubErr), false
		}
		return "", true
	}
	pr := r.cfg.Event.PR
	if pr == 0 && r.cfg.Event.SHA != "" {
		n, err := r.deps.GitHub.MergedPullRequest(ctx, r.cfg.Event.SHA)
		if err != nil {
			r.a.Warningf("cannot find the pull request of %s: %s", r.cfg.Event.SHA, OneLine(err.Error()))
		}
		pr = n
	}
	missing := func(why string) (string, bool) {
		r.outputs.ReviewedPlan = "missing"
		if require {
			return "**Not applied:** " + why + " and `require-reviewed-plan` is on. Re-run the plan on the pull request and merge again, or apply with the input off.", false
		}
		return why + ".", true
	}
	if pr == 0 {
		return missing("no pull request brought this commit, so there is no reviewed plan")
	}
	body, found, err := r.deps.GitHub.CommentBody(ctx, pr, CommentKey(r.cfg.Inputs.Name, ModePlan))
	if err != nil {
		r.a.Warningf("cannot read the plan reviewed in #%d: %s", pr, OneLine(err.Error()))
		return missing(fmt.Sprintf("the plan reviewed in #%d could not be read", pr))
	}
	reviewed, ok := ParseReview(body)
	if !found || !ok {
		return missing(fmt.Sprintf("#%d has no plan comment of snapply for `%s`", pr, r.cfg.Inputs.Name))
	}
	diffs := reviewed.Differences(r.review(p))
	if len(diffs) == 0 {
		r.outputs.ReviewedPlan = "same"
		line := fmt.Sprintf("Applies the plan reviewed in #%d.", pr)
		r.a.Noticef("%s", line)
		return line, true
	}
	r.outputs.ReviewedPlan = "differs"
	line := fmt.Sprintf("Differs from the plan reviewed in #%d (main moved, or the cluster changed, since the review):", pr)
	r.a.Warningf("%s %s", line, strings.Join(diffs, "; "))
	text := line + "\n" + bulletList(diffs)
	if require {
		return "**Not applied:** " + text + "\n`require-reviewed-plan` is on: re-run the plan on the pull request and review it, or apply with the input off.", false
	}
	return text, true
}

// refuseUnreviewed reports a plan that require-reviewed-plan keeps from
// being applied: nothing in the cluster changes, and the step fails.
func (r *run) refuseUnreviewed(ctx context.Context, why string) error {
	md := "## " + r.title + "\n\n" + joinLines(r.header(r.cfg.Event.SHA), why) + "\n"
	if err := WriteSummary(r.a, md); err != nil {
		return err
	}
	if pr := r.cfg.Event.PR; pr != 0 || r.deps.GitHub != nil {
		if pr == 0 {
			pr, _ = r.deps.GitHub.MergedPullRequest(ctx, r.cfg.Event.SHA)
		}
		r.comment(ctx, pr, CommentKey(r.cfg.Inputs.Name, ModeApply), []string{md})
	}
	if err := SetOutputs(r.a, r.outputs); err != nil {
		return err
	}
	return &ExitError{Code: 1, Err: fmt.Errorf("not applied: the plan is not the reviewed one (require-reviewed-plan)")}
}

// joinLines joins the non-empty markdown blocks with blank lines.
func joinLines(blocks ...string) string {
	var out []string
	for _, b := range blocks {
		if b != "" {
			out = append(out, b)
		}
	}
	return strings.Join(out, "\n\n")
}

// bulletList renders lines as a markdown list, in code spans.
func bulletList(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("- `" + strings.ReplaceAll(l, "`", "'") + "`\n")
	}
	return b.String()
}

// header is the line under a report's title that names the commit and
// the run it comes from, linked, so that an old comment does not look
// current.
func (r *run) header(sha string) string {
	line := SourceLine(r.cfg.Event, sha, r.cfg.RunURL())
	if r.uploadsPlanHTML() && r.cfg.RunURL() != "" {
		line = joinSentence(line, "[open the full plan]("+r.cfg.RunURL()+"#artifacts) ("+filepath.Base(r.outputs.PlanHTML)+" in the run's artifacts)")
	}
	return line
}

// uploadsPlanHTML reports that the HTML plan was written and the action's
// upload step will put it into the run's artifact: the upload-store input
// is on and the store may leave the runner (decideUpload). Only then does
// a report link it.
func (r *run) uploadsPlanHTML() bool {
	return r.outputs.PlanHTML != "" && r.outputs.UploadStore && r.outputs.ArtifactName != "" && r.cfg.Inputs.UploadStore
}

// joinSentence joins two parts of the header line with " · ".
func joinSentence(a, b string) string {
	if a == "" {
		return b
	}
	return a + " · " + b
}

// PlanHTMLPath is the HTML plan's path for a store path: next to it,
// "snapply-plan.html" for "snapply.db".
func PlanHTMLPath(store string) string {
	return strings.TrimSuffix(store, filepath.Ext(store)) + "-plan.html"
}

// htmlSubtitle names the commit and the run under the HTML plan's title.
func (r *run) htmlSubtitle() []string {
	var out []string
	sha := r.cfg.Event.HeadSHA
	if sha == "" {
		sha = r.cfg.Event.SHA
	}
	if sha != "" {
		out = append(out, "commit "+sha)
	}
	if u := r.cfg.RunURL(); u != "" {
		out = append(out, "run "+u)
	}
	return out
}

// writePlanHTML writes the HTML plan next to the store, for the artifact;
// a failure is a warning, not the run's end.
func (r *run) writePlanHTML(p *engine.Prepared) {
	if r.outputs.StorePath == "" || p.Graph() == nil {
		return
	}
	file := PlanHTMLPath(r.cfg.StoreFile())
	v := p.Graph().View(graph.ViewOptions{Status: plan.GraphStatus(p.Plan), Depth: 1})
	var b bytes.Buffer
	err := report.HTMLPlan(&b, p.Plan, report.HTMLOptions{Title: r.title, Subtitle: r.htmlSubtitle(), Graph: v})
	if err == nil {
		err = os.WriteFile(file, b.Bytes(), 0o644)
	}
	if err != nil {
		r.a.Warningf("cannot write the HTML plan %s: %s", file, OneLine(err.Error()))
		return
	}
	r.outputs.PlanHTML = PlanHTMLPath(r.outputs.StorePath)
}

// fetchRollback downloads the store artifact of the run to roll back to,
// makes it the workspace's store (unless the workspace already has one, so
// that history accumulates), and returns the desired set of the newest run
// it recorded: the apply of that run.
func (r *run) fetchRollback(ctx context.Context) (*restore.Set, error) {
	cfg := r.cfg
	if r.deps.GitHub == nil {
		return nil, fmt.Errorf("rollback-to %s: %w", cfg.Inputs.RollbackTo, r.deps.GitHubErr)
	}
	runID, err := strconv.ParseInt(cfg.Inputs.RollbackTo, 10, 64)
	if err != nil || runID <= 0 {
		return nil, fmt.Errorf("rollback-to %q: want the ID of a workflow run (the number in its URL)", cfg.Inputs.RollbackTo)
	}
	dir, err := os.MkdirTemp("", "snapply-rollback-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	downloaded, err := r.deps.GitHub.DownloadRunArtifact(ctx, runID, "", cfg.ArtifactPrefix(cfg.Inputs.RollbackTo), dir)
	if errors.Is(err, github.ErrNoArtifact) {
		return nil, fmt.Errorf("rollback-to %d: %w; the store of that run was not kept (a public repository keeps it only with the store-key input, or allow-public-store: true): set one of them so that later runs can be rolled back to", runID, err)
	}
	if err != nil {
		return nil, fmt.Errorf("rollback-to %d: %w", runID, err)
	}
	r.deps.Progress("downloaded the store of run %d", runID)
	db, err := engine.OpenStore(downloaded, true, r.storeKey(), r.a.Getenv)
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
	r.a.Noticef("rollback to run %d: restores snapshot %s (commit %s)", runID, set.Restores, set.Run.Source.Commit)
	return set, nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

// OneLine keeps an error on one line: some API server and kustomize
// messages span several, and joined errors are one per line. The lines are
// joined with "; ", and runs of white space folded. It differs from
// text.OneLine on purpose: the errors of errors.Join stay apart.
func OneLine(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}
