package githubtest

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// ArtifactFile is the name of the file inside the archive of an artifact
// added with AddArtifact: the store file that snapply's workflow uploads.
const ArtifactFile = "snapply.db"

// signedPath is where the signed download URLs point, on the same server.
const signedPath = "/_signed/artifacts/"

// Artifact is a workflow run artifact held by the Server.
type Artifact struct {
	// ID is the artifact's ID.
	ID int64
	// RunID is the workflow run that uploaded it.
	RunID int64
	// Name is its name.
	Name string
	// Expired says whether it has expired: it is still listed, but cannot be
	// downloaded.
	Expired bool
	// CreatedAt and ExpiresAt are when it was uploaded and when it expires
	// (or expired).
	CreatedAt, ExpiresAt time.Time
}

// artifact is an Artifact with its archive and download signature.
type artifact struct {
	Artifact
	archive []byte
	sig     string
}

// AddArtifact adds an artifact named name to workflow run runID whose zip
// archive holds one file, ArtifactFile, with content. An expired artifact
// expired a day before the server's clock; another one expires 90 days
// after it.
func (s *Server) AddArtifact(runID int64, name string, content []byte, expired bool) Artifact {
	return s.AddArtifactArchive(runID, name, Zip(map[string][]byte{ArtifactFile: content}), expired)
}

// AddArtifactArchive is AddArtifact with the zip archive given as is, for
// archives with several files or none, or that are not zip archives at
// all.
func (s *Server) AddArtifactArchive(runID int64, name string, archive []byte, expired bool) Artifact {
	var sig [16]byte
	_, _ = rand.Read(sig[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.tick()
	a := &artifact{
		Artifact: Artifact{
			ID:        s.newID(),
			RunID:     runID,
			Name:      name,
			Expired:   expired,
			CreatedAt: now.Add(-time.Hour),
			ExpiresAt: now.Add(90 * 24 * time.Hour),
		},
		archive: slices.Clone(archive),
		sig:     hex.EncodeToString(sig[:]),
	}
	if expired {
		a.CreatedAt = now.Add(-91 * 24 * time.Hour)
		a.ExpiresAt = now.Add(-24 * time.Hour)
	}
	s.artifacts = append(s.artifacts, a)
	return a.Artifact
}

// Zip returns a zip archive of files (name -> content), in name order.
func Zip(files map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f, err := zw.Create(name)
		if err != nil {
			panic(fmt.Sprintf("githubtest: zip %s: %v", name, err))
		}
		if _, err := f.Write(files[name]); err != nil {
			panic(fmt.Sprintf("githubtest: zip %s: %v", name, err))
		}
	}
	if err := zw.Close(); err != nil {
		panic(fmt.Sprintf("githubtest: zip: %v", err))
	}
	return buf.Bytes()
}

// artifactJSON is the shape GitHub gives an artifact.
func (s *Server) artifactJSON(r *http.Request, a *artifact) map[string]any {
	base := fmt.Sprintf("%s/repos/%s/actions/artifacts/%d", apiBase(r), s.repo, a.ID)
	return map[string]any{
		"id":                   a.ID,
		"node_id":              fmt.Sprintf("MDg6QXJ0aWZhY3Q%d", a.ID),
		"name":                 a.Name,
		"size_in_bytes":        len(a.archive),
		"url":                  base,
		"archive_download_url": base + "/zip",
		"expired":              a.Expired,
		"created_at":           a.CreatedAt.Format(time.RFC3339),
		"updated_at":           a.CreatedAt.Format(time.RFC3339),
		"expires_at":           a.ExpiresAt.Format(time.RFC3339),
		"workflow_run": map[string]any{
			"id":          a.RunID,
			"head_branch": "main",
		},
	}
}

func (s *Server) listArtifacts(w http.ResponseWriter, r *http.Request) {
	runID, err := strconv.ParseInt(r.PathValue("run"), 10, 64)
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []*artifact
	for _, a := range s.artifacts {
		if a.RunID == runID {
			all = append(all, a)
		}
	}
	start, end := page(w, r, len(all))
	list := make([]map[string]any, 0, end-start)
	for _, a := range all[start:end] {
		list = append(list, s.artifactJSON(r, a))
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(all), "artifacts": list})
}

// findArtifact returns the artifact with the ID in r's path, or nil. The
// caller holds s.mu.
func (s *Server) findArtifact(r *http.Request) *artifact {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return nil
	}
	for _, a := range s.artifacts {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// downloadArtifact answers, like GitHub, a 302 to a short-lived signed URL,
// or 410 for an expired artifact.
func (s *Server) downloadArtifact(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.findArtifact(r)
	switch {
	case a == nil:
		writeError(w, http.StatusNotFound, "Not Found")
	case a.Expired:
		writeError(w, http.StatusGone, "Artifact has expired")
	default:
		w.Header().Set("Location", fmt.Sprintf("%s%s%d?sig=%s", webBase(r), signedPath, a.ID, a.sig))
		w.WriteHeader(http.StatusFound)
	}
}

// serveSigned serves an artifact's archive to a request with the right
// signature and no Authorization header, like blob storage does.
func (s *Server) serveSigned(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		http.Error(w, "InvalidAuthenticationInfo: the request carries both a signature and an Authorization header", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	a := s.findArtifact(r)
	s.mu.Unlock()
	if a == nil || r.URL.Query().Get("sig") != a.sig {
		http.Error(w, "AuthenticationFailed: signature did not match", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Length", strconv.Itoa(len(a.archive)))
	_, _ = w.Write(a.archive)
}
