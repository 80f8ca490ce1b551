package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Issue is an issue held by the Server. Its comments are Comments with its
// Number.
type Issue struct {
	// Number is the issue's number; the Server numbers new issues from 500.
	Number int
	// Title and Body are its text.
	Title, Body string
	// Labels are the names of its labels.
	Labels []string
	// State is "open" or "closed"; StateReason is set when closed.
	State, StateReason string
	// HTMLURL is the address of its page.
	HTMLURL string
	// CreatedAt and UpdatedAt are when it was opened and last edited.
	CreatedAt, UpdatedAt time.Time
}

// Issues returns every issue, open and closed, by number.
func (s *Server) Issues() []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Issue, len(s.issues))
	for i, is := range s.issues {
		is.Labels = slices.Clone(is.Labels)
		out[i] = is
	}
	return out
}

// issueJSON is the shape GitHub gives an issue.
func (s *Server) issueJSON(r *http.Request, is Issue) map[string]any {
	labels := make([]map[string]any, 0, len(is.Labels))
	for _, l := range is.Labels {
		labels = append(labels, map[string]any{"name": l})
	}
	out := map[string]any{
		"id":         int64(is.Number) * 7,
		"number":     is.Number,
		"title":      is.Title,
		"body":       is.Body,
		"state":      is.State,
		"labels":     labels,
		"url":        fmt.Sprintf("%s/repos/%s/issues/%d", apiBase(r), s.repo, is.Number),
		"html_url":   is.HTMLURL,
		"created_at": is.CreatedAt.Format(time.RFC3339),
		"updated_at": is.UpdatedAt.Format(time.RFC3339),
		"user":       map[string]any{"login": BotLogin, "type": "Bot"},
	}
	if is.StateReason != "" {
		out["state_reason"] = is.StateReason
	}
	return out
}

// listIssues serves GET /issues with the state (default open) and labels
// (comma-separated, all required) filters, oldest first, paginated.
func (s *Server) listIssues(w http.ResponseWriter, r *http.Request) {
	state := r.URL.Query().Get("state")
	if state == "" {
		state = "open"
	}
	var labels []string
	if l := r.URL.Query().Get("labels"); l != "" {
		labels = strings.Split(l, ",")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []Issue
	for _, is := range s.issues {
		if state != "all" && is.State != state {
			continue
		}
		if !slices.ContainsFunc(labels, func(l string) bool { return !slices.Contains(is.Labels, l) }) {
			all = append(all, is)
		}
	}
	start, end := page(w, r, len(all))
	out := make([]map[string]any, 0, end-start)
	for _, is := range all[start:end] {
		out = append(out, s.issueJSON(r, is))
	}
	writeJSON(w, http.StatusOK, out)
}

// issueRequest is the body of a create or edit.
type issueRequest struct {
	Title       *string   `json:"title"`
	Body        *string   `json:"body"`
	Labels      *[]string `json:"labels"`
	State       *string   `json:"state"`
	StateReason *string   `json:"state_reason"`
}

func decodeIssue(w http.ResponseWriter, r *http.Request) (issueRequest, bool) {
	var in issueRequest
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return in, false
	}
	if in.Body != nil && len(*in.Body) > 65536 {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed: body is too long (maximum is 65536 characters)")
		return in, false
	}
	if in.State != nil && *in.State != "open" && *in.State != "closed" {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed: state")
		return in, false
	}
	return in, true
}

func (s *Server) createIssue(w http.ResponseWriter, r *http.Request) {
	in, ok := decodeIssue(w, r)
	if !ok {
		return
	}
	if in.Title == nil || *in.Title == "" {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed: title")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.tick()
	s.nextIssue++
	is := Issue{Number: s.nextIssue, Title: *in.Title, State: "open", CreatedAt: now, UpdatedAt: now}
	is.HTMLURL = fmt.Sprintf("%s/%s/issues/%d", webBase(r), s.repo, is.Number)
	if in.Body != nil {
		is.Body = *in.Body
	}
	if in.Labels != nil {
		is.Labels = slices.Clone(*in.Labels)
	}
	s.issues = append(s.issues, is)
	writeJSON(w, http.StatusCreated, s.issueJSON(r, is))
}

func (s *Server) editIssue(w http.ResponseWriter, r *http.Request) {
	in, ok := decodeIssue(w, r)
	if !ok {
		return
	}
	number, _ := strconv.Atoi(r.PathValue("number"))
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.issues, func(is Issue) bool { return is.Number == number })
	if i < 0 {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	is := &s.issues[i]
	if in.Title != nil {
		is.Title = *in.Title
	}
	if in.Body != nil {
		is.Body = *in.Body
	}
	if in.Labels != nil {
		is.Labels = slices.Clone(*in.Labels)
	}
	if in.State != nil {
		is.State, is.StateReason = *in.State, ""
		if *in.State == "closed" {
			is.StateReason = "completed"
			if in.StateReason != nil {
				is.StateReason = *in.StateReason
			}
		}
	}
	is.UpdatedAt = s.tick()
	writeJSON(w, http.StatusOK, s.issueJSON(r, *is))
}
