package engine

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/store"
)

func TestSourceFromEnv(t *testing.T) {
	events := filepath.Join("..", "..", "fixtures", "events")
	env := map[string]string{
		"GITHUB_SHA": "5d1b9e2c", "GITHUB_REF": "refs/pull/42/merge", "GITHUB_RUN_ID": "9876543210",
		"GITHUB_RUN_ATTEMPT": "2", "GITHUB_WORKFLOW": "deploy", "GITHUB_ACTOR": "alice",
		"GITHUB_REPOSITORY": "acme/platform-deploy",
	}
	for _, tc := range []struct {
		event string
		pr    int
	}{
		{"pull_request-opened.json", 42},
		{"push-main.json", 0},
		{"", 0},
		{"missing.json", 0},
	} {
		t.Run(tc.event, func(t *testing.T) {
			env["GITHUB_EVENT_PATH"] = ""
			if tc.event != "" {
				env["GITHUB_EVENT_PATH"] = filepath.Join(events, tc.event)
			}
			got := SourceFromEnv(func(k string) string { return env[k] })
			want := store.Source{Commit: "5d1b9e2c", Ref: "refs/pull/42/merge", RunID: "9876543210", RunAttempt: "2",
				Workflow: "deploy", Actor: "alice", Repository: "acme/platform-deploy", PR: tc.pr}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("SourceFromEnv (-want +got):\n%s", d)
			}
		})
	}
	if got := SourceFromEnv(func(string) string { return "" }); got != (store.Source{}) {
		t.Errorf("outside Actions: %+v, want empty", got)
	}
}
