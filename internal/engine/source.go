package engine

import (
	"encoding/json"
	"os"

	"github.com/snapply/snapply/internal/store"
)

// SourceFromEnv says where a run comes from, from the GitHub Actions
// environment (GITHUB_SHA, GITHUB_REF, GITHUB_RUN_ID, ...) and the event
// payload at GITHUB_EVENT_PATH (the pull request's number). It is the one
// builder of store.Source: the CLI and the action both use it, so the
// store, the lock holder and the inventory say the same thing. Outside
// GitHub Actions every field is empty.
func SourceFromEnv(getenv func(string) string) store.Source {
	if getenv == nil {
		getenv = os.Getenv
	}
	return store.Source{
		Commit:     getenv("GITHUB_SHA"),
		Ref:        getenv("GITHUB_REF"),
		RunID:      getenv("GITHUB_RUN_ID"),
		RunAttempt: getenv("GITHUB_RUN_ATTEMPT"),
		Workflow:   getenv("GITHUB_WORKFLOW"),
		Actor:      getenv("GITHUB_ACTOR"),
		Repository: getenv("GITHUB_REPOSITORY"),
		PR:         eventPR(getenv("GITHUB_EVENT_PATH")),
	}
}

// eventPR returns the pull request number of the event payload at path:
// pull_request.number, or the top-level number; 0 when there is none or
// the file cannot be read (the source is informative, never fatal).
func eventPR(path string) int {
	if path == "" {
		return 0
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var p struct {
		Number      int `json:"number"`
		PullRequest *struct {
			Number int `json:"number"`
		} `json:"pull_request"`
	}
	if json.Unmarshal(b, &p) != nil {
		return 0
	}
	if p.PullRequest != nil && p.PullRequest.Number > 0 {
		return p.PullRequest.Number
	}
	if p.PullRequest != nil {
		return p.Number
	}
	return 0
}
