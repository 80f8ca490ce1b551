package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/snapply/snapply/internal/version"
)

// DefaultAPIURL is the REST API of github.com, used when NewClient is given
// no API URL.
const DefaultAPIURL = "https://api.github.com"

// ErrNoToken is returned, before any request, by the calls that need a
// token when the Client has none: UpsertComment and DownloadRunArtifact.
var ErrNoToken = errors.New("no GitHub token")

// API lists the go-github v62 calls snapply makes, with the signatures of
// go-github's services (Issues, PullRequests and Actions).
type API interface {
	// ListComments is IssuesService.ListComments.
	ListComments(ctx context.Context, owner, repo string, number int, opts *gh.IssueListCommentsOptions) ([]*gh.IssueComment, *gh.Response, error)
	// CreateComment is IssuesService.CreateComment.
	CreateComment(ctx context.Context, owner, repo string, number int, comment *gh.IssueComment) (*gh.IssueComment, *gh.Response, error)
	// EditComment is IssuesService.EditComment.
	EditComment(ctx context.Context, owner, repo string, commentID int64, comment *gh.IssueComment) (*gh.IssueComment, *gh.Response, error)
	// DeleteComment is IssuesService.DeleteComment.
	DeleteComment(ctx context.Context, owner, repo string, commentID int64) (*gh.Response, error)
	// ListPullRequestsWithCommit is PullRequestsService.ListPullRequestsWithCommit.
	ListPullRequestsWithCommit(ctx context.Context, owner, repo, sha string, opts *gh.ListOptions) ([]*gh.PullRequest, *gh.Response, error)
	// ListWorkflowRunArtifacts is ActionsService.ListWorkflowRunArtifacts.
	ListWorkflowRunArtifacts(ctx context.Context, owner, repo string, runID int64, opts *gh.ListOptions) (*gh.ArtifactList, *gh.Response, error)
	// DownloadArtifact is ActionsService.DownloadArtifact: it answers the
	// signed URL that the archive can be fetched from.
	DownloadArtifact(ctx context.Context, owner, repo string, artifactID int64, maxRedirects int) (*url.URL, *gh.Response, error)
	// ListByRepo is IssuesService.ListByRepo.
	ListByRepo(ctx context.Context, owner, repo string, opts *gh.IssueListByRepoOptions) ([]*gh.Issue, *gh.Response, error)
	// CreateIssue is IssuesService.Create.
	CreateIssue(ctx context.Context, owner, repo string, issue *gh.IssueRequest) (*gh.Issue, *gh.Response, error)
	// EditIssue is IssuesService.Edit.
	EditIssue(ctx context.Context, owner, repo string, number int, issue *gh.IssueRequest) (*gh.Issue, *gh.Response, error)
}

// Client makes snapply's calls to one repository.
type Client struct {
	api         API
	owner, repo string
	hasToken    bool
	// download fetches signed URLs; it never sends the token.
	download *http.Client
}

// NewClient returns a Client of repository ("owner/name") through the REST
// API at apiURL (GITHUB_API_URL: https://api.github.com, or
// https://HOST/api/v3 on GitHub Enterprise Server; DefaultAPIURL when
// empty), used as given. token may be empty: then the calls that need one
// return ErrNoToken, and MergedPullRequest asks anonymously, which works
// for public repositories.
func NewClient(token, apiURL, repository string) (*Client, error) {
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	base, err := url.Parse(apiURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("github api url %q: want an http or https URL such as %s", apiURL, DefaultAPIURL)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	base.RawPath = ""

	httpClient := &http.Client{}
	gc := gh.NewClient(httpClient)
	if token != "" {
		gc = gc.WithAuthToken(token)
	}
	gc.BaseURL = base
	gc.UserAgent = "snapply/" + version.Version

	c, err := newClientWithAPI(restAPI{gc}, repository, httpClient)
	if err != nil {
		return nil, err
	}
	c.hasToken = token != ""
	return c, nil
}

// newClientWithAPI returns a Client of repository ("owner/name") that makes
// its calls through api, for a caller that builds its own go-github client
// (say, with a GitHub App's transport). Signed artifact URLs are fetched with
// httpClient (http.DefaultClient when nil), which must not add credentials.
// The Client assumes that api is authenticated.
func newClientWithAPI(api API, repository string, httpClient *http.Client) (*Client, error) {
	owner, repo, ok := strings.Cut(repository, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, fmt.Errorf("github repository %q: want owner/name", repository)
	}
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	return &Client{api: api, owner: owner, repo: repo, hasToken: true, download: httpClient}, nil
}

// Repository returns the "owner/name" of the Client's repository.
func (c *Client) Repository() string {
	return c.owner + "/" + c.repo
}

// restAPI implements API with a go-github client.
type restAPI struct {
	c *gh.Client
}

func (a restAPI) ListComments(ctx context.Context, owner, repo string, number int, opts *gh.IssueListCommentsOptions) ([]*gh.IssueComment, *gh.Response, error) {
	return a.c.Issues.ListComments(ctx, owner, repo, number, opts)
}

func (a restAPI) CreateComment(ctx context.Context, owner, repo string, number int, comment *gh.IssueComment) (*gh.IssueComment, *gh.Response, error) {
	return a.c.Issues.CreateComment(ctx, owner, repo, number, comment)
}

func (a restAPI) EditComment(ctx context.Context, owner, repo string, commentID int64, comment *gh.IssueComment) (*gh.IssueComment, *gh.Response, error) {
	return a.c.Issues.EditComment(ctx, owner, repo, commentID, comment)
}

func (a restAPI) DeleteComment(ctx context.Context, owner, repo string, commentID int64) (*gh.Response, error) {
	return a.c.Issues.DeleteComment(ctx, owner, repo, commentID)
}

func (a restAPI) ListPullRequestsWithCommit(ctx context.Context, owner, repo, sha string, opts *gh.ListOptions) ([]*gh.PullRequest, *gh.Response, error) {
	return a.c.PullRequests.ListPullRequestsWithCommit(ctx, owner, repo, sha, opts)
}

func (a restAPI) ListWorkflowRunArtifacts(ctx context.Context, owner, repo string, runID int64, opts *gh.ListOptions) (*gh.ArtifactList, *gh.Response, error) {
	return a.c.Actions.ListWorkflowRunArtifacts(ctx, owner, repo, runID, opts)
}

func (a restAPI) DownloadArtifact(ctx context.Context, owner, repo string, artifactID int64, maxRedirects int) (*url.URL, *gh.Response, error) {
	return a.c.Actions.DownloadArtifact(ctx, owner, repo, artifactID, maxRedirects)
}

func (a restAPI) ListByRepo(ctx context.Context, owner, repo string, opts *gh.IssueListByRepoOptions) ([]*gh.Issue, *gh.Response, error) {
	return a.c.Issues.ListByRepo(ctx, owner, repo, opts)
}

func (a restAPI) CreateIssue(ctx context.Context, owner, repo string, issue *gh.IssueRequest) (*gh.Issue, *gh.Response, error) {
	return a.c.Issues.Create(ctx, owner, repo, issue)
}

func (a restAPI) EditIssue(ctx context.Context, owner, repo string, number int, issue *gh.IssueRequest) (*gh.Issue, *gh.Response, error) {
	return a.c.Issues.Edit(ctx, owner, repo, number, issue)
}
