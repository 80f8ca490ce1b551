package action

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// The names of the action's outputs, as action.yml declares them.
const (
	OutputHasChanges   = "has-changes"
	OutputSummary      = "summary"
	OutputStorePath    = "store-path"
	OutputArtifactName = "artifact-name"
	OutputSnapshotID   = "snapshot-id"
	OutputCommentURL   = "comment-url"
	OutputRollback     = "rollback"
	OutputReviewedPlan = "reviewed-plan"
	OutputUploadStore  = "upload-store"
	OutputPlanHTML     = "plan-html"
	OutputDrifted      = "drifted"
	OutputDriftCount   = "drift-count"
)

// Outputs are the step outputs of a run.
type Outputs struct {
	// HasChanges: applying the plan changes (or changed) the cluster.
	HasChanges bool
	// Summary is marshalled to JSON: the counts by action (a plan.Summary).
	// It must hold no secret. Nil gives "{}".
	Summary any
	// StorePath is the store file relative to the workspace (Inputs.Store),
	// for the upload step.
	StorePath string
	// ArtifactName is the name to upload the store under
	// (Config.ArtifactName).
	ArtifactName string
	// SnapshotID is the ID of the run's snapshot in the store.
	SnapshotID string
	// CommentURL is the address of the pull-request comment, if any.
	CommentURL string
	// Rollback: the run rolled back (a rollback run, or a re-run of an
	// older commit).
	Rollback bool
	// ReviewedPlan, on apply: "same" when the plan is the one reviewed in
	// the pull request, "differs", "missing", or empty when not checked.
	ReviewedPlan string
	// UploadStore: the store may leave the runner as an artifact. False
	// for a public repository without a store key (and without
	// allow-public-store), or when nothing ran.
	UploadStore bool
	// PlanHTML is the HTML plan, next to the store and relative to the
	// workspace like StorePath, for the upload step; empty when none was
	// written.
	PlanHTML string
	// Drifted, in mode drift: the cluster differs from git.
	Drifted bool
	// DriftCount, in mode drift: the objects that differ from git
	// (drifted, missing, extra).
	DriftCount int
}

// fileCommandDelimiter is the heredoc delimiter go-githubactions writes
// around output values; a value holding it would end its value early.
const fileCommandDelimiter = "_GitHubActionsFileCommandDelimeter_"

// SetOutputs writes the step outputs to the GITHUB_OUTPUT file. Without
// GITHUB_OUTPUT (outside GitHub Actions) it does nothing. It fails without
// writing anything when the summary cannot be marshalled or a value holds
// the heredoc delimiter, and when the file cannot be written.
func SetOutputs(a *githubactions.Action, o Outputs) error {
	if a.Getenv("GITHUB_OUTPUT") == "" {
		return nil
	}
	summary := []byte("{}")
	if o.Summary != nil {
		var err error
		if summary, err = json.Marshal(o.Summary); err != nil {
			return fmt.Errorf("output %s: %w", OutputSummary, err)
		}
	}
	outputs := [][2]string{
		{OutputHasChanges, strconv.FormatBool(o.HasChanges)},
		{OutputSummary, string(summary)},
		{OutputStorePath, o.StorePath},
		{OutputArtifactName, o.ArtifactName},
		{OutputSnapshotID, o.SnapshotID},
		{OutputCommentURL, o.CommentURL},
		{OutputRollback, strconv.FormatBool(o.Rollback)},
		{OutputReviewedPlan, o.ReviewedPlan},
		{OutputUploadStore, strconv.FormatBool(o.UploadStore)},
		{OutputPlanHTML, o.PlanHTML},
		{OutputDrifted, strconv.FormatBool(o.Drifted)},
		{OutputDriftCount, strconv.Itoa(o.DriftCount)},
	}
	for _, kv := range outputs {
		if strings.Contains(kv[1], fileCommandDelimiter) {
			return fmt.Errorf("output %s: the value holds the delimiter %s", kv[0], fileCommandDelimiter)
		}
	}
	return guard("GITHUB_OUTPUT", func() {
		for _, kv := range outputs {
			a.SetOutput(kv[0], kv[1])
		}
	})
}

// guard runs f, which issues go-githubactions file commands, and turns the
// panic they raise when the file cannot be written into an error.
func guard(env string, f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = fmt.Errorf("%s: %w", env, e)
			} else {
				err = fmt.Errorf("%s: %v", env, r)
			}
		}
	}()
	f()
	return nil
}
