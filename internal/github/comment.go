package github

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

// CommentResult says what UpsertComment did. Each count is of comments.
type CommentResult struct {
	// URL is the address (html_url) of the first comment.
	URL string
	// Created counts the parts that were posted as new comments.
	Created int
	// Updated counts the parts whose comment was edited.
	Updated int
	// Unchanged counts the parts whose comment already had the body, and
	// was left alone.
	Unchanged int
	// Deleted counts the comments deleted: continuation parts beyond the
	// new number of parts, and duplicates of a part.
	Deleted int
}

// UpsertComment keeps one sticky comment thread per key on issue or pull
// request number: parts[0] is the first comment (put the summary there),
// parts[1:] continuation comments. Each comment's body is the marker line
// of its key and part (see MarkerLen), then the part's text; each body must
// fit in MaxCommentBytes (see Budget).
//
// The comments are found by their first line (every page of the list is
// read), so other keys' comments and people's comments are left alone. An
// existing part is edited only when its body differs; a missing part is
// created; comments of parts beyond len(parts), and duplicates of a part
// (the oldest is kept), are deleted. It returns what it did, with the URL
// of the first comment.
//
// A token that may not comment gives a *PermissionError for
// "pull-requests: write"; no token gives ErrNoToken.
func (c *Client) UpsertComment(ctx context.Context, number int, key string, parts []string) (CommentResult, error) {
	var res CommentResult
	where := fmt.Sprintf("comment %q on %s#%d", key, c.Repository(), number)
	switch {
	case number <= 0:
		return res, fmt.Errorf("%s: the pull request number is not positive", where)
	case key == "":
		return res, fmt.Errorf("%s: empty key", where)
	case len(parts) == 0:
		return res, fmt.Errorf("%s: no parts to post", where)
	case !c.hasToken:
		return res, fmt.Errorf("%s: %w", where, ErrNoToken)
	}
	bodies := make([]string, len(parts))
	for i, text := range parts {
		bodies[i] = commentBody(key, i+1, text)
		if n := len(bodies[i]); n > MaxCommentBytes {
			return res, fmt.Errorf("%s: part %d is %d bytes with its marker, over GitHub's limit of %d", where, i+1, n, MaxCommentBytes)
		}
	}

	existing, err := c.findComments(ctx, number, key)
	if err != nil {
		return res, fmt.Errorf("%s: list comments: %w", where, err)
	}

	for i, body := range bodies {
		part := i + 1
		var posted *gh.IssueComment
		switch found := existing[part]; {
		case len(found) == 0:
			posted, _, err = c.api.CreateComment(ctx, c.owner, c.repo, number, &gh.IssueComment{Body: gh.String(body)})
			if err != nil {
				return res, fmt.Errorf("%s: create part %d: %w", where, part, permissionError(err, PermissionPullRequestsWrite, true))
			}
			res.Created++
		case sameBody(found[0].GetBody(), body):
			posted = found[0]
			res.Unchanged++
		default:
			posted, _, err = c.api.EditComment(ctx, c.owner, c.repo, found[0].GetID(), &gh.IssueComment{Body: gh.String(body)})
			if err != nil {
				return res, fmt.Errorf("%s: edit part %d (comment %d): %w", where, part, found[0].GetID(), permissionError(err, PermissionPullRequestsWrite, true))
			}
			res.Updated++
		}
		if part == 1 {
			res.URL = posted.GetHTMLURL()
		}
	}

	for _, part := range slices.Sorted(maps.Keys(existing)) {
		found := existing[part]
		if part <= len(bodies) {
			found = found[1:]
		}
		for _, old := range found {
			if _, err := c.api.DeleteComment(ctx, c.owner, c.repo, old.GetID()); err != nil {
				if statusOf(err) == http.StatusNotFound {
					continue // already gone: someone else cleaned up
				}
				return res, fmt.Errorf("%s: delete part %d (comment %d): %w", where, part, old.GetID(), permissionError(err, PermissionPullRequestsWrite, false))
			}
			res.Deleted++
		}
	}
	return res, nil
}

// findComments returns key's comments on number by part, oldest first.
func (c *Client) findComments(ctx context.Context, number int, key string) (map[int][]*gh.IssueComment, error) {
	out := map[int][]*gh.IssueComment{}
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		page, resp, err := c.api.ListComments(ctx, c.owner, c.repo, number, opts)
		if err != nil {
			return nil, permissionError(err, PermissionPullRequestsWrite, false)
		}
		for _, cm := range page {
			if part, ok := parsePart(key, cm.GetBody()); ok {
				out[part] = append(out[part], cm)
			}
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		if resp.NextPage <= opts.Page {
			return nil, fmt.Errorf("the list does not advance past page %d", opts.Page)
		}
		opts.Page = resp.NextPage
	}
	for _, list := range out {
		slices.SortFunc(list, func(a, b *gh.IssueComment) int { return cmp.Compare(a.GetID(), b.GetID()) })
	}
	return out, nil
}

// sameBody says whether a comment's stored body is body; GitHub keeps the
// CRLF line ends of a comment edited in a browser.
func sameBody(stored, body string) bool {
	return strings.ReplaceAll(stored, "\r\n", "\n") == body
}

// CommentBody returns the text of the first part of key's sticky comment on
// issue or pull request number, without its marker line, and false when
// there is none.
func (c *Client) CommentBody(ctx context.Context, number int, key string) (string, bool, error) {
	where := fmt.Sprintf("comment %q on %s#%d", key, c.Repository(), number)
	if number <= 0 {
		return "", false, fmt.Errorf("%s: the pull request number is not positive", where)
	}
	existing, err := c.findComments(ctx, number, key)
	if err != nil {
		return "", false, fmt.Errorf("%s: list comments: %w", where, err)
	}
	first := existing[1]
	if len(first) == 0 {
		return "", false, nil
	}
	_, text, _ := strings.Cut(strings.ReplaceAll(first[0].GetBody(), "\r\n", "\n"), "\n")
	return text, true, nil
}
