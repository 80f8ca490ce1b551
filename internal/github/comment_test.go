package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/github/githubtest"
)

// bodies returns the bodies of the comments on number.
func bodies(srv *githubtest.Server, number int) []string {
	var out []string
	for _, c := range srv.Comments(number) {
		out = append(out, c.Body)
	}
	return out
}

func TestUpsertCommentCreateEditUnchanged(t *testing.T) {
	c, srv := newTestClient(t)
	ctx := context.Background()

	res, err := c.UpsertComment(ctx, 1, "prod", []string{"## Plan\n1 to create"})
	if err != nil {
		t.Fatal(err)
	}
	comments := srv.Comments(1)
	if len(comments) != 1 {
		t.Fatalf("got %d comments, want 1", len(comments))
	}
	first := comments[0]
	if diff := cmp.Diff(CommentResult{URL: first.HTMLURL, Created: 1}, res); diff != "" {
		t.Errorf("first UpsertComment() result (-want +got):\n%s", diff)
	}
	want := "<!-- snapply:comment key=prod part=1 -->\n## Plan\n1 to create"
	if first.Body != want || first.User != githubtest.BotLogin {
		t.Errorf("comment = %q by %s, want %q by the bot", first.Body, first.User, want)
	}

	// A new plan edits the same comment.
	res, err = c.UpsertComment(ctx, 1, "prod", []string{"## Plan\n2 to update"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(CommentResult{URL: first.HTMLURL, Updated: 1}, res); diff != "" {
		t.Errorf("second UpsertComment() result (-want +got):\n%s", diff)
	}
	comments = srv.Comments(1)
	if len(comments) != 1 || comments[0].ID != first.ID {
		t.Fatalf("comments after the edit = %+v, want comment %d edited in place", comments, first.ID)
	}
	if want := "<!-- snapply:comment key=prod part=1 -->\n## Plan\n2 to update"; comments[0].Body != want {
		t.Errorf("edited body = %q, want %q", comments[0].Body, want)
	}

	// The same plan again changes nothing.
	before := len(srv.Requests())
	res, err = c.UpsertComment(ctx, 1, "prod", []string{"## Plan\n2 to update"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(CommentResult{URL: first.HTMLURL, Unchanged: 1}, res); diff != "" {
		t.Errorf("third UpsertComment() result (-want +got):\n%s", diff)
	}
	if got := writes(srv.Requests()[before:]); len(got) != 0 {
		t.Errorf("an unchanged comment made write requests: %v", got)
	}

	wantWrites := []string{
		"POST /repos/o/r/issues/1/comments",
		fmt.Sprintf("PATCH /repos/o/r/issues/comments/%d", first.ID),
	}
	if diff := cmp.Diff(wantWrites, writes(srv.Requests())); diff != "" {
		t.Errorf("write requests (-want +got):\n%s", diff)
	}
}

func TestUpsertCommentUnchangedAfterBrowserEdit(t *testing.T) {
	c, srv := newTestClient(t)
	srv.AddComment(1, githubtest.BotLogin, "<!-- snapply:comment key=prod part=1 -->\r\na\r\nb")
	res, err := c.UpsertComment(context.Background(), 1, "prod", []string{"a\nb"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unchanged != 1 || len(writes(srv.Requests())) != 0 {
		t.Errorf("a body that differs only in CRLF line ends was rewritten: %+v, %v", res, writes(srv.Requests()))
	}
}

func TestUpsertCommentSplitAndShrink(t *testing.T) {
	c, srv := newTestClient(t)
	ctx := context.Background()

	res, err := c.UpsertComment(ctx, 2, "prod", []string{"summary", "details 2", "details 3"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"<!-- snapply:comment key=prod part=1 -->\nsummary",
		"<!-- snapply:comment key=prod part=2 -->\ndetails 2",
		"<!-- snapply:comment key=prod part=3 -->\ndetails 3",
	}
	if diff := cmp.Diff(want, bodies(srv, 2)); diff != "" {
		t.Fatalf("comments after 3 parts (-want +got):\n%s", diff)
	}
	first := srv.Comments(2)[0]
	if diff := cmp.Diff(CommentResult{URL: first.HTMLURL, Created: 3}, res); diff != "" {
		t.Errorf("3 parts result (-want +got):\n%s", diff)
	}

	// Two parts, the second changed: part 3 goes.
	res, err = c.UpsertComment(ctx, 2, "prod", []string{"summary", "details 2 again"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(CommentResult{URL: first.HTMLURL, Unchanged: 1, Updated: 1, Deleted: 1}, res); diff != "" {
		t.Errorf("2 parts result (-want +got):\n%s", diff)
	}

	// One part: the continuations go, the first stays where it was.
	res, err = c.UpsertComment(ctx, 2, "prod", []string{"small summary"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(CommentResult{URL: first.HTMLURL, Updated: 1, Deleted: 1}, res); diff != "" {
		t.Errorf("1 part result (-want +got):\n%s", diff)
	}
	got := srv.Comments(2)
	if len(got) != 1 || got[0].ID != first.ID || got[0].Body != "<!-- snapply:comment key=prod part=1 -->\nsmall summary" {
		t.Errorf("comments after 1 part = %+v, want only comment %d with the new summary", got, first.ID)
	}

	// Back to two parts: the second is created again.
	res, err = c.UpsertComment(ctx, 2, "prod", []string{"small summary", "more"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(CommentResult{URL: first.HTMLURL, Unchanged: 1, Created: 1}, res); diff != "" {
		t.Errorf("2 parts again result (-want +got):\n%s", diff)
	}
}

func TestUpsertCommentLeavesOtherCommentsAlone(t *testing.T) {
	c, srv := newTestClient(t)
	ctx := context.Background()
	others := []githubtest.Comment{
		srv.AddComment(5, githubtest.BotLogin, "<!-- snapply:comment key=staging part=1 -->\nstaging plan"),
		srv.AddComment(5, githubtest.BotLogin, "<!-- snapply:comment key=staging part=2 -->\nstaging more"),
		srv.AddComment(5, githubtest.BotLogin, "<!-- snapply:comment key=prod-eu part=2 -->\nprod-eu more"),
		srv.AddComment(5, "octocat", "> <!-- snapply:comment key=prod part=2 -->\n> details 2\n\nwhy is this changing?"),
		srv.AddComment(5, "octocat", "I copied the bot: <!-- snapply:comment key=prod part=1 --> hm"),
	}
	if _, err := c.UpsertComment(ctx, 5, "prod", []string{"summary", "details 2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpsertComment(ctx, 5, "prod", []string{"new summary"}); err != nil {
		t.Fatal(err)
	}

	got := srv.Comments(5)
	if len(got) != len(others)+1 {
		t.Fatalf("got %d comments, want the %d others and one of ours: %+v", len(got), len(others), got)
	}
	if diff := cmp.Diff(others, got[:len(others)]); diff != "" {
		t.Errorf("other comments changed (-want +got):\n%s", diff)
	}
	if want := "<!-- snapply:comment key=prod part=1 -->\nnew summary"; got[len(others)].Body != want {
		t.Errorf("our comment = %q, want %q", got[len(others)].Body, want)
	}
	for _, r := range writes(srv.Requests()) {
		for _, o := range others {
			if strings.HasSuffix(r, fmt.Sprintf("/comments/%d", o.ID)) {
				t.Errorf("request %s touches comment %d, which is not ours", r, o.ID)
			}
		}
	}
}

func TestUpsertCommentPaginates(t *testing.T) {
	c, srv := newTestClient(t)
	ctx := context.Background()
	for i := range 150 {
		srv.AddComment(9, "octocat", fmt.Sprintf("comment %d", i))
	}
	// Our comment is the 151st: on the second page of 100.
	if _, err := c.UpsertComment(ctx, 9, "prod", []string{"plan"}); err != nil {
		t.Fatal(err)
	}
	before := len(srv.Requests())
	res, err := c.UpsertComment(ctx, 9, "prod", []string{"plan"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unchanged != 1 || res.Created != 0 {
		t.Errorf("UpsertComment() = %+v, want the comment on page 2 found unchanged", res)
	}
	var got []string
	for _, r := range srv.Requests()[before:] {
		got = append(got, r.String())
	}
	want := []string{
		"GET /repos/o/r/issues/9/comments?per_page=100",
		"GET /repos/o/r/issues/9/comments?page=2&per_page=100",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestUpsertCommentDeletesDuplicates(t *testing.T) {
	c, srv := newTestClient(t)
	// Two runs raced and each created part 1.
	oldest := srv.AddComment(4, githubtest.BotLogin, "<!-- snapply:comment key=prod part=1 -->\nplan a")
	srv.AddComment(4, githubtest.BotLogin, "<!-- snapply:comment key=prod part=1 -->\nplan b")
	res, err := c.UpsertComment(context.Background(), 4, "prod", []string{"plan b"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(CommentResult{URL: oldest.HTMLURL, Updated: 1, Deleted: 1}, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	got := srv.Comments(4)
	if len(got) != 1 || got[0].ID != oldest.ID {
		t.Errorf("comments = %+v, want only the oldest, %d", got, oldest.ID)
	}
}

func TestUpsertCommentPermission(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(*githubtest.Server)
		status  int
		wantErr string
	}{
		{
			name:    "create forbidden",
			setup:   func(s *githubtest.Server) { s.Forbid("POST /repos/o/r/issues/*/comments") },
			wantErr: `comment "prod" on o/r#1: create part 1: the token lacks the "pull-requests: write" permission (GitHub answered 403: Resource not accessible by integration)`,
		},
		{
			name: "edit not found on a private repository",
			setup: func(s *githubtest.Server) {
				s.AddComment(1, githubtest.BotLogin, "<!-- snapply:comment key=prod part=1 -->\nold")
				s.Fail("PATCH /repos/o/r/issues/comments/*", http.StatusNotFound, "Not Found")
			},
			wantErr: `comment "prod" on o/r#1: edit part 1 (comment 1001): the token lacks the "pull-requests: write" permission (GitHub answered 404: Not Found)`,
		},
		{
			name:    "list forbidden",
			setup:   func(s *githubtest.Server) { s.Forbid("GET /repos/o/r/issues/1/comments") },
			wantErr: `comment "prod" on o/r#1: list comments: the token lacks the "pull-requests: write" permission (GitHub answered 403: Resource not accessible by integration)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := newTestClient(t)
			tt.setup(srv)
			_, err := c.UpsertComment(context.Background(), 1, "prod", []string{"new"})
			var perr *PermissionError
			if !errors.As(err, &perr) || perr.Permission != PermissionPullRequestsWrite {
				t.Fatalf("UpsertComment() error = %v, want a PermissionError for %q", err, PermissionPullRequestsWrite)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("error = %q\nwant    %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error %q shows the token", err)
			}
		})
	}
}

func TestUpsertCommentOtherErrorsAreNotPermissionErrors(t *testing.T) {
	c, srv := newTestClient(t)
	srv.Fail("POST /repos/o/r/issues/1/comments", http.StatusInternalServerError, "boom")
	_, err := c.UpsertComment(context.Background(), 1, "prod", []string{"x"})
	var perr *PermissionError
	if err == nil || errors.As(err, &perr) {
		t.Errorf("UpsertComment() error = %v, want an error that is not a PermissionError", err)
	}
}

func TestUpsertCommentRefusesTooLongParts(t *testing.T) {
	c, srv := newTestClient(t)
	fits := strings.Repeat("x", MaxCommentBytes-MarkerLen("prod", 2))
	_, err := c.UpsertComment(context.Background(), 1, "prod", []string{"summary", fits + "y"})
	want := `comment "prod" on o/r#1: part 2 is 65537 bytes with its marker, over GitHub's limit of 65536`
	if err == nil || err.Error() != want {
		t.Errorf("UpsertComment() error = %v, want %s", err, want)
	}
	if got := srv.Requests(); len(got) != 0 {
		t.Errorf("a refused comment made requests: %v", got)
	}

	if _, err := c.UpsertComment(context.Background(), 1, "prod", []string{"summary", fits}); err != nil {
		t.Errorf("a part of exactly the limit was refused: %v", err)
	}
}
