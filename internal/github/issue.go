package github

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

// Issue is an issue of the repository, as snapply sees it.
type Issue struct {
	// Number is the issue's number.
	Number int
	// Title and Body are its text.
	Title, Body string
	// URL is the address of its page (html_url).
	URL string
}

func issueOf(i *gh.Issue) Issue {
	return Issue{Number: i.GetNumber(), Title: i.GetTitle(), Body: strings.ReplaceAll(i.GetBody(), "\r\n", "\n"), URL: i.GetHTMLURL()}
}

// FindOpenIssue returns the oldest open issue labelled label whose body
// starts with the line marker (a hidden HTML comment that keys it), and
// false when there is none. Every page of the list is read; pull requests,
// which the issues list also holds, are left out.
func (c *Client) FindOpenIssue(ctx context.Context, label, marker string) (Issue, bool, error) {
	where := fmt.Sprintf("issues labelled %q in %s", label, c.Repository())
	if !c.hasToken {
		return Issue{}, false, fmt.Errorf("%s: %w", where, ErrNoToken)
	}
	opts := &gh.IssueListByRepoOptions{State: "open", Labels: []string{label}, Sort: "created", Direction: "asc", ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		page, resp, err := c.api.ListByRepo(ctx, c.owner, c.repo, opts)
		if err != nil {
			return Issue{}, false, fmt.Errorf("%s: list: %w", where, permissionError(err, PermissionIssuesWrite, false))
		}
		for _, i := range page {
			if i.IsPullRequest() {
				continue
			}
			first, _, _ := strings.Cut(strings.ReplaceAll(i.GetBody(), "\r\n", "\n"), "\n")
			if first == marker {
				return issueOf(i), true, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return Issue{}, false, nil
		}
		if resp.NextPage <= opts.Page {
			return Issue{}, false, fmt.Errorf("%s: the list does not advance past page %d", where, opts.Page)
		}
		opts.Page = resp.NextPage
	}
}

// CreateIssue opens an issue with title, body and labels (GitHub creates
// a label that does not exist yet).
func (c *Client) CreateIssue(ctx context.Context, title, body string, labels []string) (Issue, error) {
	where := fmt.Sprintf("issue %q in %s", title, c.Repository())
	if err := c.checkBody(where, body); err != nil {
		return Issue{}, err
	}
	i, _, err := c.api.CreateIssue(ctx, c.owner, c.repo, &gh.IssueRequest{Title: gh.String(title), Body: gh.String(body), Labels: &labels})
	if err != nil {
		return Issue{}, fmt.Errorf("%s: create: %w", where, permissionError(err, PermissionIssuesWrite, true))
	}
	return issueOf(i), nil
}

// EditIssueBody replaces the body of issue number.
func (c *Client) EditIssueBody(ctx context.Context, number int, body string) error {
	where := fmt.Sprintf("issue %s#%d", c.Repository(), number)
	if err := c.checkBody(where, body); err != nil {
		return err
	}
	if _, _, err := c.api.EditIssue(ctx, c.owner, c.repo, number, &gh.IssueRequest{Body: gh.String(body)}); err != nil {
		return fmt.Errorf("%s: edit: %w", where, permissionError(err, PermissionIssuesWrite, true))
	}
	return nil
}

// CommentOnIssue adds a comment to issue number.
func (c *Client) CommentOnIssue(ctx context.Context, number int, body string) error {
	where := fmt.Sprintf("issue %s#%d", c.Repository(), number)
	if err := c.checkBody(where, body); err != nil {
		return err
	}
	if _, _, err := c.api.CreateComment(ctx, c.owner, c.repo, number, &gh.IssueComment{Body: gh.String(body)}); err != nil {
		return fmt.Errorf("%s: comment: %w", where, permissionError(err, PermissionIssuesWrite, true))
	}
	return nil
}

// CloseIssue closes issue number as completed.
func (c *Client) CloseIssue(ctx context.Context, number int) error {
	where := fmt.Sprintf("issue %s#%d", c.Repository(), number)
	if !c.hasToken {
		return fmt.Errorf("%s: %w", where, ErrNoToken)
	}
	req := &gh.IssueRequest{State: gh.String("closed"), StateReason: gh.String("completed")}
	if _, _, err := c.api.EditIssue(ctx, c.owner, c.repo, number, req); err != nil {
		return fmt.Errorf("%s: close: %w", where, permissionError(err, PermissionIssuesWrite, true))
	}
	return nil
}

// checkBody refuses, before any request, a call without a token and a
// body over GitHub's limit.
func (c *Client) checkBody(where, body string) error {
	switch {
	case !c.hasToken:
		return fmt.Errorf("%s: %w", where, ErrNoToken)
	case body == "":
		return fmt.Errorf("%s: empty body", where)
	case len(body) > MaxCommentBytes:
		return fmt.Errorf("%s: the body is %d bytes, over GitHub's limit of %d", where, len(body), MaxCommentBytes)
	}
	return nil
}
