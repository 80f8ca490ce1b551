package githubtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// do sends a request to srv and returns the status and body.
func do(t *testing.T, method, url, auth, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func TestServerStatuses(t *testing.T) {
	srv := NewServer(t)
	srv.AddComment(1, "octocat", "hi")
	srv.Forbid("DELETE /repos/o/r/issues/comments/*")
	tests := []struct {
		name, method, path, auth, body string
		want                           int
	}{
		{"list without a token", "GET", "/repos/o/r/issues/1/comments", "", "", 200},
		{"create without a token", "POST", "/repos/o/r/issues/1/comments", "", `{"body":"x"}`, 401},
		{"create", "POST", "/repos/o/r/issues/1/comments", "Bearer t", `{"body":"x"}`, 201},
		{"create with an empty body", "POST", "/repos/o/r/issues/1/comments", "Bearer t", `{"body":""}`, 422},
		{"create on Enterprise", "POST", "/api/v3/repos/o/r/issues/1/comments", "Bearer t", `{"body":"x"}`, 201},
		{"another repository", "GET", "/repos/o/other/issues/1/comments", "Bearer t", "", 404},
		{"edit a missing comment", "PATCH", "/repos/o/r/issues/comments/99", "Bearer t", `{"body":"x"}`, 404},
		{"forbidden delete", "DELETE", "/repos/o/r/issues/comments/1001", "Bearer t", "", 403},
		{"forbidden delete on Enterprise", "DELETE", "/api/v3/repos/o/r/issues/comments/1001", "Bearer t", "", 403},
		{"artifacts without a token", "GET", "/repos/o/r/actions/runs/1/artifacts", "", "", 401},
		{"unknown endpoint", "GET", "/repos/o/r/issues/1", "Bearer t", "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, body := do(t, tt.method, srv.URL+tt.path, tt.auth, tt.body)
			if got != tt.want {
				t.Errorf("%s %s = %d %s, want %d", tt.method, tt.path, got, body, tt.want)
			}
		})
	}
	if got := len(srv.Comments(1)); got != 3 {
		t.Errorf("issue 1 has %d comments, want the added one and the 2 created", got)
	}
}

func TestServerForbidMessage(t *testing.T) {
	srv := NewServer(t)
	srv.Forbid("POST /repos/o/r/issues/*/comments")
	status, _, body := do(t, "POST", srv.URL+"/repos/o/r/issues/7/comments", "Bearer t", `{"body":"x"}`)
	var got struct{ Message string }
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if status != 403 || got.Message != ForbiddenMessage {
		t.Errorf("forbidden answer = %d %q, want 403 %q", status, got.Message, ForbiddenMessage)
	}
	if len(srv.Comments(7)) != 0 {
		t.Error("a forbidden request created a comment")
	}
}

func TestServerRecordsRequests(t *testing.T) {
	srv := NewServer(t)
	do(t, "POST", srv.URL+"/repos/o/r/issues/2/comments?x=1", "Bearer t", `{"body":"hello"}`)
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("recorded %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	r.Header = nil
	want := Request{Method: "POST", Path: "/repos/o/r/issues/2/comments", Query: "x=1", Body: `{"body":"hello"}`}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer t" {
		t.Errorf("recorded Authorization %q, want %q", got, "Bearer t")
	}
}

func TestServerPaginates(t *testing.T) {
	srv := NewServer(t)
	for range 5 {
		srv.AddComment(1, "octocat", "x")
	}
	_, header, body := do(t, "GET", srv.URL+"/api/v3/repos/o/r/issues/1/comments?per_page=2&page=2", "", "")
	var got []map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]["id"] != float64(1003) {
		t.Errorf("page 2 of 2 = %v, want comments 1003 and 1004", got)
	}
	link := header.Get("Link")
	next := "<" + srv.URL + `/api/v3/repos/o/r/issues/1/comments?page=3&per_page=2>; rel="next"`
	if !strings.Contains(link, next) {
		t.Errorf("Link = %q, want it to hold %q", link, next)
	}
}

func TestServerArtifactDownload(t *testing.T) {
	srv := NewServer(t)
	a := srv.AddArtifact(4, "snap", []byte("db"), false)
	expired := srv.AddArtifact(4, "old", []byte("db"), true)
	zipPath := srv.URL + "/repos/o/r/actions/artifacts/"

	status, header, _ := do(t, "GET", zipPath+itoa(a.ID)+"/zip", "Bearer t", "")
	signed := header.Get("Location")
	if status != http.StatusFound || !strings.HasPrefix(signed, srv.URL+"/_signed/") {
		t.Fatalf("download = %d to %q, want 302 to a signed URL on the server", status, signed)
	}
	if status, _, _ := do(t, "GET", zipPath+itoa(expired.ID)+"/zip", "Bearer t", ""); status != http.StatusGone {
		t.Errorf("download of an expired artifact = %d, want 410", status)
	}

	if status, _, _ := do(t, "GET", signed, "Bearer t", ""); status != http.StatusBadRequest {
		t.Errorf("signed URL with an Authorization header = %d, want 400", status)
	}
	if status, _, _ := do(t, "GET", strings.Split(signed, "?")[0]+"?sig=wrong", "", ""); status != http.StatusForbidden {
		t.Errorf("signed URL with a wrong signature = %d, want 403", status)
	}
	status, _, body := do(t, "GET", signed, "", "")
	if status != http.StatusOK || body != string(Zip(map[string][]byte{ArtifactFile: []byte("db")})) {
		t.Errorf("signed URL = %d with %d bytes, want 200 with the archive", status, len(body))
	}
}

func itoa(n int64) string {
	return strconv.FormatInt(n, 10)
}
