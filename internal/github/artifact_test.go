package github

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/github/githubtest"
)

func TestDownloadRunArtifact(t *testing.T) {
	c, srv := newTestClient(t)
	srv.AddArtifact(77, "snapply-prod-77-1", []byte("old attempt"), false)
	a := srv.AddArtifact(77, "snapply-prod-77-2", []byte("store bytes"), false)
	srv.AddArtifact(78, "snapply-prod-78-1", []byte("other run"), false)
	dir := filepath.Join(t.TempDir(), "restore")

	got, err := c.DownloadRunArtifact(context.Background(), 77, "snapply-prod-77-2", "", dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, githubtest.ArtifactFile); got != want {
		t.Errorf("DownloadRunArtifact() = %q, want %q", got, want)
	}
	content, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(content) != "store bytes" {
		t.Errorf("downloaded file holds %q, want %q", content, "store bytes")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want only the file (temporary files left?)", len(entries))
	}

	var gotReqs []string
	for _, r := range srv.Requests() {
		auth := r.Header.Get("Authorization")
		if strings.HasPrefix(r.Path, "/repos/") && auth != "Bearer "+testToken {
			t.Errorf("API request %s has Authorization %q, want the token", r, auth)
		}
		if !strings.HasPrefix(r.Path, "/repos/") && auth != "" {
			t.Errorf("signed URL request %s carries Authorization %q", r, auth)
		}
		gotReqs = append(gotReqs, r.Method+" "+r.Path)
	}
	want := []string{
		"GET /repos/o/r/actions/runs/77/artifacts",
		fmt.Sprintf("GET /repos/o/r/actions/artifacts/%d/zip", a.ID),
		fmt.Sprintf("GET /_signed/artifacts/%d", a.ID),
	}
	if diff := cmp.Diff(want, gotReqs); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestDownloadRunArtifactByPrefix(t *testing.T) {
	c, srv := newTestClient(t)
	srv.AddArtifact(5, "coverage", []byte("no"), false)
	srv.AddArtifact(5, "snapply-prod-5-1", []byte("yes"), false)
	got, err := c.DownloadRunArtifact(context.Background(), 5, "", "snapply-", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if content, _ := os.ReadFile(got); string(content) != "yes" {
		t.Errorf("downloaded %q, want the snapply artifact's %q", content, "yes")
	}
}

// The action's artifact holds the store and the HTML plan next to it: the
// store is the file downloaded.
func TestDownloadRunArtifactLeavesTheHTMLPlanOut(t *testing.T) {
	c, srv := newTestClient(t)
	srv.AddArtifactArchive(7, "snapply-prod-7-1", githubtest.Zip(map[string][]byte{"snapply.db": []byte("store"), "snapply-plan.html": []byte("<html>")}), false)
	dir := t.TempDir()
	got, err := c.DownloadRunArtifact(context.Background(), 7, "snapply-prod-7-1", "", dir)
	if err != nil {
		t.Fatal(err)
	}
	if content, _ := os.ReadFile(got); filepath.Base(got) != "snapply.db" || string(content) != "store" {
		t.Errorf("downloaded %s = %q, want snapply.db, the store", got, content)
	}
	if _, err := os.Stat(filepath.Join(dir, "snapply-plan.html")); err == nil {
		t.Error("the HTML plan was extracted too")
	}
}

func TestDownloadRunArtifactPaginates(t *testing.T) {
	c, srv := newTestClient(t)
	for i := range 120 {
		srv.AddArtifact(6, fmt.Sprintf("other-%03d", i), []byte("no"), false)
	}
	srv.AddArtifact(6, "snapply-prod-6-1", []byte("yes"), false)
	got, err := c.DownloadRunArtifact(context.Background(), 6, "snapply-prod-6-1", "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if content, _ := os.ReadFile(got); string(content) != "yes" {
		t.Errorf("downloaded %q, want %q", content, "yes")
	}
}

func TestDownloadRunArtifactErrors(t *testing.T) {
	// The fake server's clock is 2025-06-01 12:00 UTC plus a second per
	// change; an expired artifact expired a day earlier.
	expiredOn := time.Date(2025, 5, 31, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	tests := []struct {
		name         string
		setup        func(*githubtest.Server)
		artifact     string
		prefix       string
		wantErr      string
		wantPermFor  string
		wantNoSigned bool
	}{
		{
			name:     "expired",
			setup:    func(s *githubtest.Server) { s.AddArtifact(9, "snapply-prod-9-1", []byte("x"), true) },
			artifact: "snapply-prod-9-1",
			wantErr:  `artifact "snapply-prod-9-1" of run 9 expired on ` + expiredOn,
		},
		{
			name: "missing",
			setup: func(s *githubtest.Server) {
				s.AddArtifact(9, "coverage", []byte("x"), false)
				s.AddArtifact(9, "logs", []byte("x"), false)
			},
			artifact: "snapply-prod-9-1",
			wantErr:  `run 9 has no artifact named "snapply-prod-9-1" (artifacts: coverage, logs)`,
		},
		{
			name:    "run without artifacts",
			setup:   func(s *githubtest.Server) {},
			prefix:  "snapply-",
			wantErr: `run 9 has no artifact whose name starts with "snapply-" (artifacts: none)`,
		},
		{
			name:        "list forbidden",
			setup:       func(s *githubtest.Server) { s.Forbid("GET /repos/o/r/actions/runs/9/artifacts") },
			artifact:    "a",
			wantErr:     `run 9: list artifacts: the token lacks the "actions: read" permission (GitHub answered 403: Resource not accessible by integration)`,
			wantPermFor: PermissionActionsRead,
		},
		{
			name: "download forbidden",
			setup: func(s *githubtest.Server) {
				s.AddArtifact(9, "a", []byte("x"), false)
				s.Forbid("GET /repos/o/r/actions/artifacts/*/zip")
			},
			artifact:    "a",
			wantErr:     `artifact "a" of run 9: download: the token lacks the "actions: read" permission (GitHub answered 403: Forbidden)`,
			wantPermFor: PermissionActionsRead,
		},
		{
			name: "archive of two files",
			setup: func(s *githubtest.Server) {
				s.AddArtifactArchive(9, "a", githubtest.Zip(map[string][]byte{"one": nil, "two": nil}), false)
			},
			artifact: "a",
			wantErr:  `artifact "a" of run 9: the archive holds 2 files (one, two), want one`,
		},
		{
			name:     "not a zip archive",
			setup:    func(s *githubtest.Server) { s.AddArtifactArchive(9, "a", []byte("<html>"), false) },
			artifact: "a",
			wantErr:  `artifact "a" of run 9: open the archive: zip: not a valid zip file`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := newTestClient(t)
			tt.setup(srv)
			dir := t.TempDir()
			_, err := c.DownloadRunArtifact(context.Background(), 9, tt.artifact, tt.prefix, dir)
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("DownloadRunArtifact() error = %v\nwant %s", err, tt.wantErr)
			}
			var perr *PermissionError
			if isPerm := errors.As(err, &perr); isPerm != (tt.wantPermFor != "") || (isPerm && perr.Permission != tt.wantPermFor) {
				t.Errorf("error %v: PermissionError %v, want one for %q", err, perr, tt.wantPermFor)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("a failed download left %d files in the directory", len(entries))
			}
		})
	}
}

func TestDownloadRunArtifactKeepsTheFileInTheDirectory(t *testing.T) {
	c, srv := newTestClient(t)
	srv.AddArtifactArchive(3, "a", githubtest.Zip(map[string][]byte{"../../escape.db": []byte("x")}), false)
	dir := filepath.Join(t.TempDir(), "in")
	got, err := c.DownloadRunArtifact(context.Background(), 3, "a", "", dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "escape.db"); got != want {
		t.Errorf("DownloadRunArtifact() = %q, want %q", got, want)
	}
}

func TestDownloadRunArtifactPrefixTakesTheLastAttempt(t *testing.T) {
	srv := githubtest.NewServer(t)
	srv.AddArtifact(9, "snapply-prod-9-1", []byte("first attempt"), false)
	srv.AddArtifact(9, "snapply-prod-9-2", []byte("second attempt"), false)
	srv.AddArtifact(9, "snapply-staging-9-3", []byte("other environment"), false)
	c, err := NewClient("token", srv.URL, githubtest.Repository)
	if err != nil {
		t.Fatal(err)
	}
	path, err := c.DownloadRunArtifact(t.Context(), 9, "", "snapply-prod-9-", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "second attempt" {
		t.Errorf("downloaded %q, want the last attempt's artifact", got)
	}
}
