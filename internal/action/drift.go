package action

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/snapply/snapply/internal/drift"
	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/github"
	"github.com/snapply/snapply/internal/report"
)

// DriftLabel labels the drift issues snapply keeps, one per environment.
const DriftLabel = "snapply-drift"

// DriftTitle is the title of the drift issue of environment name.
func DriftTitle(name string) string { return "Drift in " + name }

// driftMarker is the first line of the body of name's drift issue: it
// keys the issue, whatever people rename it to.
func driftMarker(name string) string { return "<!-- snapply-drift: " + name + " -->" }

// driftSetPrefix starts the hidden line that records the set of drifted
// objects, so that the next run can tell whether it changed.
const driftSetPrefix = "<!-- snapply-drift-set: "

// maxListed bounds the objects a drift comment names.
const maxListed = 20

// drift compares the cluster with git, reports to the log and the job
// summary, and keeps the environment's drift issue: opened on the first
// drift, its body edited while drift lasts (with a comment when the set of
// drifted objects changes), closed with a comment once the cluster matches
// git again. Drift is not a failure of the step: see the drifted output.
func (r *run) drift(ctx context.Context, eng *engine.Engine, t engine.Target) error {
	var rep *drift.Report
	err := Group(r.a, "snapply drift: render, snapshot, compare with git", func() error {
		var err error
		if rep, err = eng.Drift(ctx, t, r.options(), engine.DriftOptions{Orphans: r.cfg.Inputs.Orphans}); err == nil {
			err = report.DriftText(r.deps.Log, rep, report.DefaultTextOptions())
		}
		return err
	})
	if err = r.annotateRender(err); err != nil {
		_ = SetOutputs(r.a, r.outputs)
		return err
	}
	r.outputs.Drifted = rep.HasDrift()
	r.outputs.DriftCount = rep.Summary.Drifts()
	r.outputs.SnapshotID = rep.Snapshot
	opts := report.DriftMarkdownOptions{Title: r.title, Header: r.header(r.cfg.Event.SHA)}
	var full bytes.Buffer
	if err := report.DriftMarkdown(&full, rep, opts); err != nil {
		return err
	}
	if err := WriteSummary(r.a, full.String()); err != nil {
		return err
	}
	if rep.HasDrift() {
		r.a.Warningf("%s", report.DriftLine(rep))
	} else {
		r.a.Noticef("%s", report.DriftLine(rep))
	}
	if err := r.syncDriftIssue(ctx, rep, opts); err != nil {
		r.a.Warningf("drift issue: %s", OneLine(err.Error()))
	}
	if err := SetOutputs(r.a, r.outputs); err != nil {
		return err
	}
	if rep.Summary.Invalid > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("drift: the server refuses %d objects of git", rep.Summary.Invalid)}
	}
	return nil
}

// syncDriftIssue opens, edits or closes the drift issue of the
// environment; with the comment input off it does nothing.
func (r *run) syncDriftIssue(ctx context.Context, rep *drift.Report, opts report.DriftMarkdownOptions) error {
	if !r.cfg.Inputs.Comment {
		return nil
	}
	if r.deps.GitHub == nil {
		return r.deps.GitHubErr
	}
	gh, name := r.deps.GitHub, r.cfg.Inputs.Name
	marker := driftMarker(name)
	issue, found, err := gh.FindOpenIssue(ctx, DriftLabel, marker)
	if err != nil {
		return err
	}
	src := r.header(r.cfg.Event.SHA)
	if src == "" {
		src = "this run"
	}
	if !rep.HasDrift() {
		if !found {
			return nil
		}
		if err := gh.CommentOnIssue(ctx, issue.Number, "The cluster matches git again ("+src+"). Closing."); err != nil {
			return err
		}
		if err := gh.CloseIssue(ctx, issue.Number); err != nil {
			return err
		}
		r.outputs.CommentURL = issue.URL
		r.deps.Progress("drift issue #%d closed: the cluster matches git", issue.Number)
		return nil
	}
	set := driftSet(rep)
	head := marker + "\n" + driftSetPrefix + set + " -->\n"
	opts.MaxBytes = github.MaxCommentBytes - len(head)
	var md bytes.Buffer
	if err := report.DriftMarkdown(&md, rep, opts); err != nil {
		return err
	}
	body := head + md.String()
	if !found {
		created, err := gh.CreateIssue(ctx, DriftTitle(name), body, []string{DriftLabel})
		if err != nil {
			return err
		}
		r.outputs.CommentURL = created.URL
		r.a.Noticef("drift issue opened: %s", created.URL)
		return nil
	}
	r.outputs.CommentURL = issue.URL
	if issue.Body != body {
		if err := gh.EditIssueBody(ctx, issue.Number, body); err != nil {
			return err
		}
	}
	if previousSet(issue.Body) != set {
		comment := fmt.Sprintf("The drifted objects changed (%s): now %s.\n\n%s", src, plural(rep.Summary.Drifts(), "object", "objects"), listObjects(rep))
		if err := gh.CommentOnIssue(ctx, issue.Number, comment); err != nil {
			return err
		}
	}
	r.deps.Progress("drift issue #%d updated", issue.Number)
	return nil
}

// driftSet is a digest of the objects that differ from git and how.
func driftSet(rep *drift.Report) string {
	lines := make([]string, 0, len(rep.Objects))
	for _, o := range rep.Objects {
		if o.State != drift.Invalid {
			lines = append(lines, string(o.State)+" "+o.Ref.String())
		}
	}
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:8])
}

// previousSet reads the digest an issue body records; empty when none.
func previousSet(body string) string {
	_, rest, ok := strings.Cut(body, driftSetPrefix)
	if !ok {
		return ""
	}
	set, _, _ := strings.Cut(rest, " -->")
	return set
}

// listObjects lists the objects that differ, as markdown, at most
// maxListed of them.
func listObjects(rep *drift.Report) string {
	var b strings.Builder
	n := 0
	for _, o := range rep.Objects {
		if o.State == drift.Invalid {
			continue
		}
		if n == maxListed {
			fmt.Fprintf(&b, "- and %d more\n", rep.Summary.Drifts()-n)
			break
		}
		fmt.Fprintf(&b, "- `%s` (%s)\n", strings.ReplaceAll(o.Ref.String(), "`", "'"), o.State)
		n++
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
