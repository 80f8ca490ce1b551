package github

import (
	"errors"
	"net/http"
	"testing"

	gh "github.com/google/go-github/v62/github"
)

func TestPermissionError(t *testing.T) {
	answer := func(status int, message string) error {
		return &gh.ErrorResponse{Response: &http.Response{StatusCode: status}, Message: message}
	}
	tests := []struct {
		name        string
		err         error
		notFoundToo bool
		want        string // "" when err is not a PermissionError
	}{
		{"403", answer(403, "Resource not accessible by integration"), false,
			`the token lacks the "pull-requests: write" permission (GitHub answered 403: Resource not accessible by integration)`},
		{"403 without a message", answer(403, ""), false,
			`the token lacks the "pull-requests: write" permission (GitHub answered 403: Forbidden)`},
		{"404 on a write", answer(404, "Not Found"), true,
			`the token lacks the "pull-requests: write" permission (GitHub answered 404: Not Found)`},
		{"404 on a read", answer(404, "Not Found"), false, ""},
		{"422", answer(422, "Validation Failed"), true, ""},
		{"rate limit", &gh.RateLimitError{Message: "API rate limit exceeded"}, true, ""},
		{"network", errors.New("connection refused"), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := permissionError(tt.err, PermissionPullRequestsWrite, tt.notFoundToo)
			var perr *PermissionError
			if !errors.As(got, &perr) {
				if tt.want != "" {
					t.Fatalf("permissionError() = %v, want a PermissionError", got)
				}
				if got != tt.err {
					t.Errorf("permissionError() = %v, want the error unchanged", got)
				}
				return
			}
			if tt.want == "" {
				t.Fatalf("permissionError() = %v, want no PermissionError", got)
			}
			if got.Error() != tt.want {
				t.Errorf("Error() = %q\nwant      %q", got, tt.want)
			}
			if !errors.Is(got, tt.err) {
				t.Error("the PermissionError does not unwrap to GitHub's answer")
			}
		})
	}
}
