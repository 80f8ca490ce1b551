package github

import (
	"errors"
	"fmt"
	"net/http"

	gh "github.com/google/go-github/v62/github"
)

// The permissions (workflow `permissions:` entries) that snapply's calls need.
const (
	// PermissionPullRequestsWrite lets the token list, create, edit and
	// delete pull request comments.
	PermissionPullRequestsWrite = "pull-requests: write"
	// PermissionPullRequestsRead lets the token list the pull requests of a
	// commit (with "contents: read", which a workflow that checks out its
	// repository has).
	PermissionPullRequestsRead = "pull-requests: read"
	// PermissionActionsRead lets the token list and download the artifacts
	// of workflow runs.
	PermissionActionsRead = "actions: read"
	// PermissionIssuesWrite lets the token list, open, edit, comment on
	// and close issues (the drift issue).
	PermissionIssuesWrite = "issues: write"
)

// PermissionError says which permission the token lacks: GitHub refused a
// call with 403 (or, for a comment write, 404, which is what it answers
// about a private repository the token cannot write to).
type PermissionError struct {
	// Permission is the missing permission, as written in a workflow's
	// `permissions:`, such as "pull-requests: write".
	Permission string
	// Err is GitHub's answer, usually a *github.ErrorResponse.
	Err error
}

// Error says, for example: the token lacks the "pull-requests: write"
// permission (GitHub answered 403: Resource not accessible by integration).
func (e *PermissionError) Error() string {
	var er *gh.ErrorResponse
	if errors.As(e.Err, &er) && er.Response != nil {
		msg := er.Message
		if msg == "" {
			msg = http.StatusText(er.Response.StatusCode)
		}
		return fmt.Sprintf("the token lacks the %q permission (GitHub answered %d: %s)", e.Permission, er.Response.StatusCode, msg)
	}
	return fmt.Sprintf("the token lacks the %q permission (%v)", e.Permission, e.Err)
}

// Unwrap returns Err.
func (e *PermissionError) Unwrap() error {
	return e.Err
}

// statusOf returns the HTTP status of GitHub's error answer, or 0 when err
// is not one (a network error, a rate limit error).
func statusOf(err error) int {
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}

// permissionError returns err as a *PermissionError for permission when
// GitHub answered 403, or 404 and notFoundToo; otherwise err.
func permissionError(err error, permission string, notFoundToo bool) error {
	switch statusOf(err) {
	case http.StatusForbidden:
		return &PermissionError{Permission: permission, Err: err}
	case http.StatusNotFound:
		if notFoundToo {
			return &PermissionError{Permission: permission, Err: err}
		}
	}
	return err
}
