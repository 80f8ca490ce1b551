package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v62/github"
)

// MergedPullRequest returns the number of the merged pull request that
// commit sha belongs to: the one whose merge commit is sha (what a push to
// the default branch carries, whether the pull request was merged, squashed
// or rebased), else the first merged one that holds sha. It returns 0 and no
// error when no merged pull request holds sha (a direct push).
//
// A token that may not list pull requests gives a *PermissionError for
// "pull-requests: read".
func (c *Client) MergedPullRequest(ctx context.Context, sha string) (int, error) {
	if sha == "" {
		return 0, fmt.Errorf("commit of %s: empty sha", c.Repository())
	}
	pulls, _, err := c.api.ListPullRequestsWithCommit(ctx, c.owner, c.repo, sha, &gh.ListOptions{PerPage: 100})
	if err != nil {
		return 0, fmt.Errorf("commit %s of %s: list pull requests: %w", sha, c.Repository(), permissionError(err, PermissionPullRequestsRead, false))
	}
	first := 0
	for _, p := range pulls {
		if p.MergedAt == nil {
			continue
		}
		if p.GetMergeCommitSHA() == sha {
			return p.GetNumber(), nil
		}
		if first == 0 {
			first = p.GetNumber()
		}
	}
	return first, nil
}
