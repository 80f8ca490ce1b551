package github

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/snapply/snapply/internal/github/githubtest"
)

// mergedAt is when the tests' merged pull requests were merged.
var mergedAt = time.Date(2025, 5, 30, 9, 0, 0, 0, time.UTC)

func TestMergedPullRequest(t *testing.T) {
	pulls := []githubtest.Pull{
		// An open pull request whose branch holds the commit too.
		{Number: 10, HeadSHA: "f00d", Commits: []string{"abc1"}},
		// A merged one that holds it but did not merge it.
		{Number: 11, HeadSHA: "beef", Commits: []string{"abc1"}, MergedAt: mergedAt, MergeCommitSHA: "0ther"},
		// The one whose merge made the commit.
		{Number: 12, HeadSHA: "cafe", MergedAt: mergedAt, MergeCommitSHA: "abc1"},
		// A pull request closed without merging.
		{Number: 13, HeadSHA: "dead"},
	}
	tests := []struct {
		name, sha string
		want      int
	}{
		{"merge commit", "abc1", 12},
		{"commit of a merged branch", "beef", 11},
		{"commit of an open pull request only", "f00d", 0},
		{"closed without merging", "dead", 0},
		{"direct push", "1234", 0},
	}
	c, srv := newTestClient(t)
	for _, p := range pulls {
		srv.AddPull(p)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.MergedPullRequest(context.Background(), tt.sha)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("MergedPullRequest(%q) = %d, want %d", tt.sha, got, tt.want)
			}
		})
	}
}

func TestMergedPullRequestPermission(t *testing.T) {
	c, srv := newTestClient(t)
	srv.Forbid("GET /repos/o/r/commits/*/pulls")
	_, err := c.MergedPullRequest(context.Background(), "abc1")
	var perr *PermissionError
	if !errors.As(err, &perr) || perr.Permission != PermissionPullRequestsRead {
		t.Fatalf("MergedPullRequest() error = %v, want a PermissionError for %q", err, PermissionPullRequestsRead)
	}
	want := `commit abc1 of o/r: list pull requests: the token lacks the "pull-requests: read" permission (GitHub answered 403: Resource not accessible by integration)`
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
}
