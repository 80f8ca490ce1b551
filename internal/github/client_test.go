package github

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/snapply/snapply/internal/github/githubtest"
)

// testToken is the token the tests' clients send.
const testToken = "ghs_testtoken"

// newTestClient returns a Client of githubtest.Repository on a new fake
// server.
func newTestClient(t *testing.T) (*Client, *githubtest.Server) {
	t.Helper()
	srv := githubtest.NewServer(t)
	c, err := NewClient(testToken, srv.URL, githubtest.Repository)
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

// writes returns the requests that are not GETs.
func writes(reqs []githubtest.Request) []string {
	var out []string
	for _, r := range reqs {
		if r.Method != "GET" {
			out = append(out, r.String())
		}
	}
	return out
}

func TestNewClientEnterpriseURL(t *testing.T) {
	for _, suffix := range []string{"/api/v3", "/api/v3/"} {
		t.Run(suffix, func(t *testing.T) {
			srv := githubtest.NewServer(t)
			c, err := NewClient(testToken, srv.URL+suffix, "o/r")
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.UpsertComment(context.Background(), 3, "prod", []string{"plan"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Created != 1 {
				t.Errorf("created %d comments, want 1", res.Created)
			}
			reqs := srv.Requests()
			if len(reqs) == 0 {
				t.Fatal("no requests")
			}
			for _, r := range reqs {
				if !strings.HasPrefix(r.Path, "/api/v3/repos/o/r/issues/3/comments") {
					t.Errorf("request %s is not under the enterprise API path /api/v3/repos/o/r/issues/3/comments", r)
				}
				if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
					t.Errorf("request %s has Authorization %q, want the token", r, got)
				}
			}
		})
	}
}

func TestNewClientErrors(t *testing.T) {
	tests := []struct {
		name, apiURL, repository, want string
	}{
		{"no owner", "", "repo", `github repository "repo": want owner/name`},
		{"empty name", "", "owner/", `github repository "owner/": want owner/name`},
		{"too many slashes", "", "a/b/c", `github repository "a/b/c": want owner/name`},
		{"no scheme", "api.github.com", "o/r", `github api url "api.github.com": want an http or https URL such as https://api.github.com`},
		{"bad scheme", "ftp://x", "o/r", `github api url "ftp://x": want an http or https URL such as https://api.github.com`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewClient("tok", tt.apiURL, tt.repository)
			if err == nil || err.Error() != tt.want {
				t.Errorf("NewClient() error = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestNoToken(t *testing.T) {
	srv := githubtest.NewServer(t)
	c, err := NewClient("", srv.URL, "o/r")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.UpsertComment(ctx, 1, "prod", []string{"x"}); !errors.Is(err, ErrNoToken) {
		t.Errorf("UpsertComment() error = %v, want ErrNoToken", err)
	}
	if _, err := c.DownloadRunArtifact(ctx, 7, "a", "", t.TempDir()); !errors.Is(err, ErrNoToken) {
		t.Errorf("DownloadRunArtifact() error = %v, want ErrNoToken", err)
	}
	if got := srv.Requests(); len(got) != 0 {
		t.Errorf("calls without a token made requests: %v", got)
	}

	// Listing the pull requests of a commit works anonymously on a public
	// repository.
	srv.AddPull(githubtest.Pull{Number: 4, HeadSHA: "h", MergeCommitSHA: "m", MergedAt: mergedAt})
	n, err := c.MergedPullRequest(ctx, "m")
	if err != nil || n != 4 {
		t.Errorf("MergedPullRequest() = %d, %v, want 4", n, err)
	}
	for _, r := range srv.Requests() {
		if h := r.Header.Get("Authorization"); h != "" {
			t.Errorf("request %s without a token has Authorization %q", r, h)
		}
	}
}
