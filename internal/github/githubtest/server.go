// Package githubtest is a fake GitHub REST API for tests: an httptest server
// that implements the endpoints snapply calls, with the JSON shapes GitHub
// answers, records every request, and fails on demand.
//
// Endpoints (all under /repos/{owner}/{repo}, for the one repository the
// server holds, Repository by default; other repositories answer 404):
//
//	GET    /issues/{number}/comments            list, paginated (page, per_page, Link header)
//	POST   /issues/{number}/comments            create, as BotLogin
//	PATCH  /issues/comments/{id}                edit
//	DELETE /issues/comments/{id}                delete
//	GET    /issues                              list issues (state, labels), paginated
//	POST   /issues                              open an issue
//	PATCH  /issues/{number}                     edit an issue (title, body, labels, state)
//	GET    /commits/{sha}/pulls                 pull requests with the commit
//	GET    /actions/runs/{run_id}/artifacts     list, paginated
//	GET    /actions/artifacts/{id}/zip          302 to a signed URL on the same server
//
// Every endpoint is also served under /api/v3, the prefix of GitHub
// Enterprise Server's API: srv.URL is a github.com-style API URL and
// srv.URL+EnterprisePrefix an Enterprise-style one.
//
// Write endpoints (POST, PATCH, DELETE) and the artifact endpoints answer 401
// without an Authorization header. The signed download URL is the opposite:
// like the blob storage GitHub redirects to, it refuses a request that
// carries an Authorization header (400) or a wrong signature (403).
package githubtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"testing"
	"time"
)

// Repository is the "owner/name" of the repository a new Server holds.
const Repository = "o/r"

// EnterprisePrefix is the path under which GitHub Enterprise Server serves
// its REST API; the Server serves every endpoint under it too.
const EnterprisePrefix = "/api/v3"

// ForbiddenMessage is the message GitHub answers, with a 403, when the token
// of a workflow lacks a permission.
const ForbiddenMessage = "Resource not accessible by integration"

// Request is one request the Server received.
type Request struct {
	// Method is the HTTP method, such as "PATCH".
	Method string
	// Path is the URL path as received, with EnterprisePrefix if it was used.
	Path string
	// Query is the raw query string, such as "page=2&per_page=100".
	Query string
	// Header holds the request's headers, Authorization included.
	Header http.Header
	// Body is the request body.
	Body string
}

// String returns "METHOD /path", with "?query" when there is one.
func (r Request) String() string {
	if r.Query == "" {
		return r.Method + " " + r.Path
	}
	return r.Method + " " + r.Path + "?" + r.Query
}

// failure is an injected answer for the requests matching a route.
type failure struct {
	method, pattern string
	status          int
	message         string
}

// Server is a fake GitHub REST API. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL of the server, without a trailing slash: use it as
	// GITHUB_API_URL (and GITHUB_SERVER_URL).
	URL string

	srv *httptest.Server
	mux *http.ServeMux

	mu        sync.Mutex
	repo      string
	requests  []Request
	failures  []failure
	nextID    int64
	now       time.Time
	comments  []Comment
	pulls     []Pull
	artifacts []*artifact
	issues    []Issue
	nextIssue int
}

// NewServer starts a Server holding Repository; it is closed when the test
// ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		repo:      Repository,
		nextID:    1000,
		nextIssue: 500,
		now:       time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC),
		mux:       http.NewServeMux(),
	}
	s.routes()
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// SetRepository makes the server hold repository "owner/name" instead of
// Repository.
func (s *Server) SetRepository(repository string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo = repository
}

// Requests returns the requests received so far, oldest first. Requests to
// the signed download URL are included.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Header = r.Header.Clone()
		out[i] = r
	}
	return out
}

// Forbid makes the requests matching route answer 403 with
// ForbiddenMessage, as GitHub does when the token lacks a permission. See
// Fail for the syntax of route.
func (s *Server) Forbid(route string) {
	s.Fail(route, http.StatusForbidden, ForbiddenMessage)
}

// Fail makes the requests matching route answer status with a GitHub error
// body carrying message, from now on. route is "METHOD /path", where the
// path is the API path without EnterprisePrefix and may use path.Match
// patterns, such as "POST /repos/o/r/issues/*/comments" or
// "GET /repos/o/r/actions/artifacts/*/zip". The first matching failure
// wins. Fail panics on a malformed route.
func (s *Server) Fail(route string, status int, message string) {
	method, pattern, ok := strings.Cut(route, " ")
	if !ok || method == "" || !strings.HasPrefix(pattern, "/") {
		panic(fmt.Sprintf("githubtest: route %q: want \"METHOD /path\"", route))
	}
	if _, err := path.Match(pattern, "/"); err != nil {
		panic(fmt.Sprintf("githubtest: route %q: %v", route, err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, failure{method: method, pattern: pattern, status: status, message: message})
}

// serve records the request, strips EnterprisePrefix, applies injected
// failures and dispatches to the routes.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "cannot read body")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))

	s.mu.Lock()
	s.requests = append(s.requests, Request{
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.RawQuery,
		Header: r.Header.Clone(),
		Body:   string(body),
	})
	apiPath := r.URL.Path
	prefix := ""
	if rest, ok := strings.CutPrefix(apiPath, EnterprisePrefix+"/"); ok {
		apiPath, prefix = "/"+rest, EnterprisePrefix
	}
	var fail *failure
	for i, f := range s.failures {
		if ok, _ := path.Match(f.pattern, apiPath); ok && f.method == r.Method {
			fail = &s.failures[i]
			break
		}
	}
	s.mu.Unlock()

	if fail != nil {
		writeError(w, fail.status, fail.message)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = apiPath
	r2.URL.RawPath = ""
	r2 = r2.WithContext(withPrefix(r2.Context(), prefix))
	s.mux.ServeHTTP(w, r2)
}

// routes registers the endpoints.
func (s *Server) routes() {
	repo := "/repos/{owner}/{repo}"
	s.handle("GET "+repo+"/issues/{number}/comments", true, s.listComments)
	s.handle("POST "+repo+"/issues/{number}/comments", true, s.createComment)
	s.handle("PATCH "+repo+"/issues/comments/{id}", true, s.editComment)
	s.handle("DELETE "+repo+"/issues/comments/{id}", true, s.deleteComment)
	s.handle("GET "+repo+"/issues", true, s.listIssues)
	s.handle("POST "+repo+"/issues", true, s.createIssue)
	s.handle("PATCH "+repo+"/issues/{number}", true, s.editIssue)
	s.handle("GET "+repo+"/commits/{sha}/pulls", true, s.listPulls)
	s.handle("GET "+repo+"/actions/runs/{run}/artifacts", true, s.listArtifacts)
	s.handle("GET "+repo+"/actions/artifacts/{id}/zip", true, s.downloadArtifact)
	s.handle("GET "+signedPath+"{id}", false, s.serveSigned)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "Not Found")
	})
}

// handle registers h for pattern; repository routes check the owner and
// repository and the authentication that GitHub requires.
func (s *Server) handle(pattern string, isRepo bool, h http.HandlerFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if isRepo {
			s.mu.Lock()
			repo := s.repo
			s.mu.Unlock()
			if r.PathValue("owner")+"/"+r.PathValue("repo") != repo {
				writeError(w, http.StatusNotFound, "Not Found")
				return
			}
			needsAuth := r.Method != http.MethodGet || strings.Contains(r.URL.Path, "/actions/")
			if needsAuth && r.Header.Get("Authorization") == "" {
				writeError(w, http.StatusUnauthorized, "Requires authentication")
				return
			}
		}
		h(w, r)
	})
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers status with a GitHub error body.
func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]string{
		"message":           message,
		"documentation_url": "https://docs.github.com/rest",
	})
}

// tick returns the server's clock, one second later than the last call.
// The caller holds s.mu.
func (s *Server) tick() time.Time {
	s.now = s.now.Add(time.Second)
	return s.now
}

// newID returns a fresh ID. The caller holds s.mu.
func (s *Server) newID() int64 {
	s.nextID++
	return s.nextID
}
