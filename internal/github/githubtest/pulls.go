package githubtest

import (
	"fmt"
	"net/http"
	"slices"
	"time"
)

// Pull is a pull request held by the Server.
type Pull struct {
	// Number is the pull request's number.
	Number int
	// Title is its title.
	Title string
	// HeadRef and BaseRef are its branches, "feature" and "main" when empty.
	HeadRef, BaseRef string
	// HeadSHA is the last commit of its branch.
	HeadSHA string
	// Commits are the other commits of its branch.
	Commits []string
	// MergedAt is when it was merged; zero for an open or closed pull request.
	MergedAt time.Time
	// MergeCommitSHA is the commit that merging it made on the base branch
	// (a merge, squash or rebase commit).
	MergeCommitSHA string
}

// AddPull adds a pull request. GET /repos/{owner}/{repo}/commits/{sha}/pulls
// lists, in the order they were added, the pull requests whose HeadSHA,
// Commits or MergeCommitSHA hold sha.
func (s *Server) AddPull(p Pull) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.HeadRef == "" {
		p.HeadRef = "feature"
	}
	if p.BaseRef == "" {
		p.BaseRef = "main"
	}
	p.Commits = slices.Clone(p.Commits)
	s.pulls = append(s.pulls, p)
}

// pullJSON is the shape GitHub gives a pull request in a list.
func (s *Server) pullJSON(r *http.Request, p Pull) map[string]any {
	state := "open"
	var mergedAt any
	if !p.MergedAt.IsZero() {
		state = "closed"
		mergedAt = p.MergedAt.UTC().Format(time.RFC3339)
	}
	var mergeSHA any
	if p.MergeCommitSHA != "" {
		mergeSHA = p.MergeCommitSHA
	}
	return map[string]any{
		"id":               int64(p.Number) + 500000,
		"number":           p.Number,
		"state":            state,
		"title":            p.Title,
		"url":              fmt.Sprintf("%s/repos/%s/pulls/%d", apiBase(r), s.repo, p.Number),
		"html_url":         fmt.Sprintf("%s/%s/pull/%d", webBase(r), s.repo, p.Number),
		"merged_at":        mergedAt,
		"merge_commit_sha": mergeSHA,
		"head":             map[string]any{"ref": p.HeadRef, "sha": p.HeadSHA},
		"base":             map[string]any{"ref": p.BaseRef},
	}
}

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request) {
	sha := r.PathValue("sha")
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []Pull
	for _, p := range s.pulls {
		if p.HeadSHA == sha || p.MergeCommitSHA == sha || slices.Contains(p.Commits, sha) {
			all = append(all, p)
		}
	}
	start, end := page(w, r, len(all))
	out := make([]map[string]any, 0, end-start)
	for _, p := range all[start:end] {
		out = append(out, s.pullJSON(r, p))
	}
	writeJSON(w, http.StatusOK, out)
}
