package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// BotLogin is the login of the user that comments created through the API
// belong to: the GITHUB_TOKEN's bot.
const BotLogin = "github-actions[bot]"

// Comment is an issue or pull request comment held by the Server.
type Comment struct {
	// ID is the comment's ID.
	ID int64
	// Number is the issue or pull request it belongs to.
	Number int
	// User is the login of its author.
	User string
	// Body is its text.
	Body string
	// HTMLURL is the address of the comment's page.
	HTMLURL string
	// CreatedAt and UpdatedAt are when it was created and last edited.
	CreatedAt, UpdatedAt time.Time
}

// Comments returns the comments on issue or pull request number, oldest
// first.
func (s *Server) Comments(number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if c.Number == number {
			out = append(out, c)
		}
	}
	return out
}

// AddComment adds a comment by user (a login, such as "octocat") on issue or
// pull request number, without a request, and returns it.
func (s *Server) AddComment(number int, user, body string) Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addComment(s.URL, number, user, body)
}

// addComment appends a comment. The caller holds s.mu.
func (s *Server) addComment(web string, number int, user, body string) Comment {
	now := s.tick()
	id := s.newID()
	c := Comment{
		ID:        id,
		Number:    number,
		User:      user,
		Body:      body,
		HTMLURL:   fmt.Sprintf("%s/%s/pull/%d#issuecomment-%d", web, s.repo, number, id),
		CreatedAt: now,
		UpdatedAt: now,
	}
	s.comments = append(s.comments, c)
	return c
}

// commentJSON is the shape GitHub gives an issue comment.
func (s *Server) commentJSON(r *http.Request, c Comment) map[string]any {
	userType := "User"
	userID := int64(583231)
	if c.User == BotLogin {
		userType, userID = "Bot", 41898282
	}
	return map[string]any{
		"id":         c.ID,
		"node_id":    fmt.Sprintf("IC_kwDO%d", c.ID),
		"url":        fmt.Sprintf("%s/repos/%s/issues/comments/%d", apiBase(r), s.repo, c.ID),
		"html_url":   c.HTMLURL,
		"issue_url":  fmt.Sprintf("%s/repos/%s/issues/%d", apiBase(r), s.repo, c.Number),
		"body":       c.Body,
		"created_at": c.CreatedAt.Format(time.RFC3339),
		"updated_at": c.UpdatedAt.Format(time.RFC3339),
		"user": map[string]any{
			"login": c.User,
			"id":    userID,
			"type":  userType,
		},
		"author_association": "NONE",
	}
}

// decodeBody reads a comment request's {"body": "..."}; GitHub refuses a
// missing or empty body with 422.
func decodeBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return "", false
	}
	if in.Body == nil || *in.Body == "" {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed")
		return "", false
	}
	if len(*in.Body) > 65536 {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed: body is too long (maximum is 65536 characters)")
		return "", false
	}
	return *in.Body, true
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request) {
	number, err := strconv.Atoi(r.PathValue("number"))
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []Comment
	for _, c := range s.comments {
		if c.Number == number {
			all = append(all, c)
		}
	}
	start, end := page(w, r, len(all))
	out := make([]map[string]any, 0, end-start)
	for _, c := range all[start:end] {
		out = append(out, s.commentJSON(r, c))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request) {
	number, err := strconv.Atoi(r.PathValue("number"))
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.addComment(webBase(r), number, BotLogin, body)
	w.Header().Set("Location", fmt.Sprintf("%s/repos/%s/issues/comments/%d", apiBase(r), s.repo, c.ID))
	writeJSON(w, http.StatusCreated, s.commentJSON(r, c))
}

// commentIndex returns the index of the comment with the ID in r's path, or
// -1. The caller holds s.mu.
func (s *Server) commentIndex(r *http.Request) int {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return -1
	}
	return slices.IndexFunc(s.comments, func(c Comment) bool { return c.ID == id })
}

func (s *Server) editComment(w http.ResponseWriter, r *http.Request) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.commentIndex(r)
	if i < 0 {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	s.comments[i].Body = body
	s.comments[i].UpdatedAt = s.tick()
	writeJSON(w, http.StatusOK, s.commentJSON(r, s.comments[i]))
}

func (s *Server) deleteComment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.commentIndex(r)
	if i < 0 {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	s.comments = slices.Delete(s.comments, i, i+1)
	w.WriteHeader(http.StatusNoContent)
}
