package action

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/snapply/snapply/internal/apply"
)

// Kind is what an apply run does to the cluster, as decided from the
// event and the inventory's record of the last apply.
type Kind string

// The kinds of an apply run.
const (
	// KindApply applies a new commit.
	KindApply Kind = "apply"
	// KindRetry runs again the apply of the commit that is live: a re-run
	// of the run that last applied (or of a newer run that failed before
	// it could record).
	KindRetry Kind = "retry"
	// KindRollback applies an older commit than the live one: a run older
	// than the one that last applied.
	KindRollback Kind = "rollback"
)

// Classification is the kind of an apply run and the line that says so.
type Classification struct {
	Kind Kind
	// Line says what the run does, like "retry of run 42 (attempt 2)" or
	// "rollback from 1a2b3c4d5e6f to 0f9e8d7c6b5a"; empty for KindApply.
	Line string
}

// ClassifyApply tells an apply, a retry and a rollback apart. Run IDs grow
// with time; the inventory records the ID of the run that last applied.
//
//   - this run is older than the last one that applied: a rollback;
//   - a re-run (attempt above 1) of the last run that applied, or of a
//     newer one: a retry of this run's commit;
//   - anything else: an apply.
func ClassifyApply(ev Event, inv *apply.Inventory) Classification {
	var live, lastRun string
	if inv != nil {
		live, lastRun = inv.Annotations[apply.LastCommitAnnotation], inv.Annotations[apply.LastRunIDAnnotation]
	}
	attempt, _ := strconv.Atoi(ev.RunAttempt)
	last, errLast := strconv.ParseInt(lastRun, 10, 64)
	this, errThis := strconv.ParseInt(ev.RunID, 10, 64)
	older := errLast == nil && errThis == nil && this < last
	switch {
	case older:
		return Classification{Kind: KindRollback, Line: fmt.Sprintf("rollback from %s to %s", shortSHA(live), shortSHA(ev.SHA))}
	case attempt > 1:
		return Classification{Kind: KindRetry, Line: fmt.Sprintf("retry of run %s (attempt %d)", ev.RunID, attempt)}
	}
	return Classification{Kind: KindApply}
}

// shortSHA shortens a commit to 12 characters; "an unknown commit" when
// empty.
func shortSHA(c string) string {
	if c == "" {
		return "an unknown commit"
	}
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// CommentKey is the key of the sticky comment of an environment: the plan
// of a pull request, and the result of applying it (a comment of its own,
// so that the reviewed plan stays readable).
func CommentKey(name string, mode Mode) string {
	if mode == ModePlan {
		return name
	}
	return name + ":apply"
}

// ArtifactPrefix is the prefix of the store artifacts of the run runID (any
// attempt): ArtifactName without the attempt.
func (c *Config) ArtifactPrefix(runID string) string {
	past := *c
	past.Event.RunID, past.Event.RunAttempt = runID, "1"
	return strings.TrimSuffix(past.ArtifactName(), "1")
}

// SourceLine names, in markdown, the commit a report is about and the run
// that made it: "Commit [`1a2b3c4`](…/commit/1a2b…) · [run 42](…/runs/42)".
// It is empty outside GitHub Actions.
func SourceLine(ev Event, sha, runURL string) string {
	var parts []string
	if sha != "" {
		short := sha
		if len(short) > 7 {
			short = short[:7]
		}
		if ev.Repository != "" {
			parts = append(parts, fmt.Sprintf("Commit [`%s`](%s/%s/commit/%s)", short, strings.TrimSuffix(ev.ServerURL, "/"), ev.Repository, sha))
		} else {
			parts = append(parts, fmt.Sprintf("Commit `%s`", short))
		}
	}
	if runURL != "" {
		run := "run " + ev.RunID
		if n, err := strconv.Atoi(ev.RunAttempt); err == nil && n > 1 {
			run += fmt.Sprintf(" (attempt %d)", n)
		}
		parts = append(parts, fmt.Sprintf("[%s](%s)", run, runURL))
	}
	return strings.Join(parts, " · ")
}
