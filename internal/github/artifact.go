package github

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// DownloadRunArtifact downloads an artifact of workflow run runID and
// writes the one file its archive holds into directory dstDir (created if
// missing), returning the file's path. HTML pages in the archive (the
// action uploads its HTML plan next to the store) are left out. The
// artifact is the one named name, or when name is "", the newest one whose
// name starts with prefix (the last attempt's, when several attempts of the
// run uploaded one).
//
// It lists the run's artifacts, asks GitHub for the artifact's download
// URL, a short-lived signed URL, and fetches that URL without the token.
// An expired artifact gives `artifact "X" of run N expired on DATE`; a
// missing one `run N has no artifact named "X" (artifacts: a, b)`. A token
// without "actions: read" gives a *PermissionError; no token gives
// ErrNoToken.
func (c *Client) DownloadRunArtifact(ctx context.Context, runID int64, name, prefix, dstDir string) (string, error) {
	switch {
	case name == "" && prefix == "":
		return "", fmt.Errorf("run %d: no artifact name or prefix to download", runID)
	case dstDir == "":
		return "", fmt.Errorf("run %d: no directory to download into", runID)
	case !c.hasToken:
		return "", fmt.Errorf("run %d: download artifact: %w", runID, ErrNoToken)
	}
	arts, err := c.listArtifacts(ctx, runID)
	if err != nil {
		return "", fmt.Errorf("run %d: list artifacts: %w", runID, err)
	}
	art, err := pickArtifact(runID, arts, name, prefix)
	if err != nil {
		return "", err
	}
	where := fmt.Sprintf("artifact %q of run %d", art.GetName(), runID)

	signed, resp, err := c.api.DownloadArtifact(ctx, c.owner, c.repo, art.GetID(), 3)
	if err != nil {
		// DownloadArtifact does not turn an error status into an
		// ErrorResponse: do it, for permissionError.
		if resp != nil && resp.Response != nil && statusOf(err) == 0 {
			err = &gh.ErrorResponse{Response: resp.Response, Message: http.StatusText(resp.StatusCode)}
		}
		if statusOf(err) == http.StatusGone {
			return "", fmt.Errorf("%s has expired", where)
		}
		return "", fmt.Errorf("%s: download: %w", where, permissionError(err, PermissionActionsRead, false))
	}

	if err := os.MkdirAll(dstDir, 0o755); err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	archive, err := c.fetch(ctx, signed, dstDir)
	if err != nil {
		return "", fmt.Errorf("%s: download: %w", where, err)
	}
	defer os.Remove(archive)
	dst, err := extractOne(archive, dstDir)
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	return dst, nil
}

// listArtifacts returns every artifact of run runID.
func (c *Client) listArtifacts(ctx context.Context, runID int64) ([]*gh.Artifact, error) {
	var all []*gh.Artifact
	opts := &gh.ListOptions{PerPage: 100}
	for {
		list, resp, err := c.api.ListWorkflowRunArtifacts(ctx, c.owner, c.repo, runID, opts)
		if err != nil {
			return nil, permissionError(err, PermissionActionsRead, false)
		}
		all = append(all, list.Artifacts...)
		if resp == nil || resp.NextPage == 0 {
			return all, nil
		}
		if resp.NextPage <= opts.Page {
			return nil, fmt.Errorf("the list does not advance past page %d", opts.Page)
		}
		opts.Page = resp.NextPage
	}
}

// pickArtifact returns the artifact named name, or when name is "", one
// whose name starts with prefix. Of several that match, the newest one that
// has not expired wins.
func pickArtifact(runID int64, arts []*gh.Artifact, name, prefix string) (*gh.Artifact, error) {
	var names []string
	var match []*gh.Artifact
	for _, a := range arts {
		names = append(names, a.GetName())
		if (name != "" && a.GetName() == name) || (name == "" && strings.HasPrefix(a.GetName(), prefix)) {
			match = append(match, a)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	listed := "none"
	if len(names) > 0 {
		listed = strings.Join(names, ", ")
	}
	wanted := fmt.Sprintf("named %q", name)
	if name == "" {
		wanted = fmt.Sprintf("whose name starts with %q", prefix)
	}
	if len(match) == 0 {
		return nil, &noArtifactError{fmt.Sprintf("run %d has no artifact %s (artifacts: %s)", runID, wanted, listed)}
	}
	// Newest first.
	slices.SortStableFunc(match, func(a, b *gh.Artifact) int { return -cmpID(a, b) })
	live := slices.DeleteFunc(slices.Clone(match), func(a *gh.Artifact) bool { return a.GetExpired() })
	if len(live) == 0 {
		a := match[0]
		if a.ExpiresAt == nil {
			return nil, fmt.Errorf("artifact %q of run %d has expired", a.GetName(), runID)
		}
		return nil, fmt.Errorf("artifact %q of run %d expired on %s", a.GetName(), runID, a.ExpiresAt.UTC().Format(time.DateOnly))
	}
	// With a prefix, several attempts of the run may each have uploaded
	// one: the newest (the last attempt's) wins.
	return live[0], nil
}

// cmpID orders artifacts by ID.
func cmpID(a, b *gh.Artifact) int {
	switch {
	case a.GetID() < b.GetID():
		return -1
	case a.GetID() > b.GetID():
		return 1
	}
	return 0
}

// fetch GETs the signed URL u, without credentials, into a temporary file
// in dir, and returns its path. Errors never carry u: its signature grants
// access to the artifact.
func (c *Client) fetch(ctx context.Context, u *url.URL, dir string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", errors.New("bad signed URL")
	}
	resp, err := c.download.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("get the signed URL of host %s: %w", u.Host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("the signed URL of host %s answered %s", u.Host, resp.Status)
	}
	f, err := os.CreateTemp(dir, ".artifact-*.zip")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("read the archive: %w", err)
	}
	return f.Name(), nil
}

// extractOne writes the one file of zip archive archive that is not an
// HTML page into dir, under its base name, and returns its path. The
// action's artifact holds the store and the HTML plan next to it.
func extractOne(archive, dir string) (string, error) {
	zr, err := zip.OpenReader(archive)
	if err != nil {
		return "", fmt.Errorf("open the archive: %w", err)
	}
	defer zr.Close()
	var files []*zip.File
	var names []string
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.HasSuffix(strings.ToLower(f.Name), ".html") {
			continue
		}
		files = append(files, f)
		names = append(names, f.Name)
	}
	if len(files) != 1 {
		return "", fmt.Errorf("the archive holds %d files (%s), want one", len(files), strings.Join(names, ", "))
	}
	f := files[0]
	base := path.Base(strings.ReplaceAll(f.Name, `\`, "/"))
	if base == "." || base == ".." || base == "/" {
		return "", fmt.Errorf("the archive's file has a bad name %q", f.Name)
	}
	dst := filepath.Join(dir, base)

	rc, err := f.Open()
	if err != nil {
		return "", fmt.Errorf("archive file %s: %w", f.Name, err)
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(dir, "."+base+"-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(tmp, rc)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("archive file %s: %w", f.Name, err)
	}
	return dst, nil
}

// ErrNoArtifact matches (errors.Is) the error of DownloadRunArtifact when
// the run has no artifact of the name or prefix asked for.
var ErrNoArtifact = errors.New("no such artifact")

// noArtifactError says which artifact a run lacks, and what it has.
type noArtifactError struct{ msg string }

func (e *noArtifactError) Error() string        { return e.msg }
func (e *noArtifactError) Is(target error) bool { return target == ErrNoArtifact }
