// Package chartrepo fetches Helm charts from remote sources, pinned to an
// exact version and checked against a lock file: an HTTP chart repository
// (its index.yaml) or an OCI registry (oci://). A chart is downloaded once
// into a cache directory, named by its digest; the lock file (snapply.lock,
// next to the kustomization that lists the chart) records chart -> version
// -> sha256, so that plan and apply render the same bytes. Only
// `snapply lock` writes the lock file.
package chartrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// LockFileName is the lock file's name, next to a kustomization.
const LockFileName = "snapply.lock"

// maxChartSize bounds a downloaded chart (and an index.yaml).
const maxChartSize = 64 << 20

// ErrUnpinned is wrapped by the error of a remote chart without an exact
// version.
var ErrUnpinned = errors.New("remote charts must be pinned to an exact version")

// ErrNotLocked is wrapped by the error of a remote chart that the lock
// file does not list.
var ErrNotLocked = errors.New("is not in " + LockFileName + ": run `snapply lock PATH` to add it")

// ErrDigestMismatch is wrapped by the error of a chart whose content does
// not match the lock file.
var ErrDigestMismatch = errors.New("does not match " + LockFileName)

// exactVersion matches a semantic version without a range or wildcard.
var exactVersion = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// Fetcher downloads charts into a cache.
type Fetcher struct {
	// CacheDir holds downloaded charts, one file per digest.
	CacheDir string
	// Client makes the requests; nil means a client with a 60s timeout.
	Client *http.Client
}

// DefaultCacheDir returns where charts are cached: $SNAPPLY_CHART_CACHE,
// else the runner's tool cache in GitHub Actions
// ($RUNNER_TOOL_CACHE/snapply/charts), else
// ${XDG_CACHE_HOME:-~/.cache}/snapply/charts.
func DefaultCacheDir(getenv func(string) string) string {
	if d := getenv("SNAPPLY_CHART_CACHE"); d != "" {
		return d
	}
	if d := getenv("RUNNER_TOOL_CACHE"); d != "" {
		return filepath.Join(d, "snapply", "charts")
	}
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cache = filepath.Join(home, ".cache")
		} else {
			cache = os.TempDir()
		}
	}
	return filepath.Join(cache, "snapply", "charts")
}

// Key names a chart in the lock file: the repository and the chart name,
// "https://charts.example.com/external-dns" or
// "oci://registry.example.com/charts/external-dns".
func Key(repo, name string) string {
	return strings.TrimSuffix(repo, "/") + "/" + name
}

// Digest returns "sha256:<hex>" of b.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CheckVersion returns an error wrapping ErrUnpinned unless version is an
// exact semantic version.
func CheckVersion(version string) error {
	if version == "" {
		return fmt.Errorf("no version: %w", ErrUnpinned)
	}
	if !exactVersion.MatchString(version) {
		return fmt.Errorf("version %q: %w", version, ErrUnpinned)
	}
	return nil
}

// Fetch returns the packaged chart (.tgz) name at version from repo, and
// its digest. When want (a digest from the lock file) is set, a cached
// copy with that digest is used without any request, and a download whose
// digest differs is an error wrapping ErrDigestMismatch.
func (f *Fetcher) Fetch(ctx context.Context, repo, name, version, want string) ([]byte, string, error) {
	if err := CheckVersion(version); err != nil {
		return nil, "", err
	}
	if want != "" {
		if b, err := os.ReadFile(f.cachePath(want)); err == nil && Digest(b) == want {
			return b, want, nil
		}
	}
	var b []byte
	var err error
	if strings.HasPrefix(repo, "oci://") {
		b, err = f.fetchOCI(ctx, repo, name, version)
	} else {
		b, err = f.fetchHTTP(ctx, repo, name, version)
	}
	if err != nil {
		return nil, "", err
	}
	got := Digest(b)
	if want != "" && got != want {
		return nil, "", fmt.Errorf("%s@%s: downloaded digest %s %w (%s): the chart changed under the same version", Key(repo, name), version, got, ErrDigestMismatch, want)
	}
	if err := f.store(got, b); err != nil {
		return nil, "", err
	}
	return b, got, nil
}

func (f *Fetcher) cachePath(digest string) string {
	return filepath.Join(f.CacheDir, strings.ReplaceAll(digest, ":", "-")+".tgz")
}

// store writes a chart into the cache, atomically.
func (f *Fetcher) store(digest string, b []byte) error {
	if err := os.MkdirAll(f.CacheDir, 0o755); err != nil {
		return fmt.Errorf("chart cache: %w", err)
	}
	tmp, err := os.CreateTemp(f.CacheDir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("chart cache: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("chart cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("chart cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.cachePath(digest)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("chart cache: %w", err)
	}
	return nil
}

func (f *Fetcher) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	return &http.Client{Timeout: 60 * time.Second}
}

// get GETs u with the given Accept header and returns the body of a 200.
func (f *Fetcher) get(ctx context.Context, u, accept, token string) ([]byte, *http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxChartSize+1))
	if err != nil {
		return nil, resp, err
	}
	if len(b) > maxChartSize {
		return nil, resp, fmt.Errorf("GET %s: larger than %d MiB", redactURL(u), maxChartSize>>20)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, resp, fmt.Errorf("GET %s: %s", redactURL(u), resp.Status)
	}
	return b, resp, nil
}

// index is the part of a chart repository's index.yaml that is read.
type index struct {
	Entries map[string][]struct {
		Version string   `json:"version"`
		URLs    []string `json:"urls"`
	} `json:"entries"`
}

// fetchHTTP downloads a chart from an HTTP chart repository.
func (f *Fetcher) fetchHTTP(ctx context.Context, repo, name, version string) ([]byte, error) {
	base, err := url.Parse(strings.TrimSuffix(repo, "/") + "/")
	if err != nil {
		return nil, fmt.Errorf("repo %q: %w", repo, err)
	}
	b, _, err := f.get(ctx, base.JoinPath("index.yaml").String(), "", "")
	if err != nil {
		return nil, err
	}
	var idx index
	if err := yaml.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("%s: index.yaml: %v", redactURL(repo), oneLine(err.Error()))
	}
	for _, e := range idx.Entries[name] {
		if strings.TrimPrefix(e.Version, "v") != strings.TrimPrefix(version, "v") || len(e.URLs) == 0 {
			continue
		}
		u, err := base.Parse(e.URLs[0])
		if err != nil {
			return nil, fmt.Errorf("%s: index.yaml: url %q: %w", redactURL(repo), e.URLs[0], err)
		}
		b, _, err := f.get(ctx, u.String(), "", "")
		return b, err
	}
	return nil, fmt.Errorf("%s: no chart %s version %s in index.yaml", redactURL(repo), name, version)
}

// The media types of a Helm chart in an OCI registry.
const (
	ociManifestType   = "application/vnd.oci.image.manifest.v1+json"
	helmChartLayerTyp = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// fetchOCI downloads a chart from an OCI registry: the manifest of tag
// version in repository <path>/<name>, then its chart layer. An anonymous
// bearer token is asked for when the registry wants one.
func (f *Fetcher) fetchOCI(ctx context.Context, repo, name, version string) ([]byte, error) {
	ref := strings.TrimPrefix(strings.TrimSuffix(repo, "/"), "oci://")
	host, path, _ := strings.Cut(ref, "/")
	repository := strings.TrimPrefix(path+"/"+name, "/")
	scheme := "https"
	if strings.HasPrefix(host, "localhost") || strings.HasPrefix(host, "127.0.0.1") || strings.HasPrefix(host, "[::1]") {
		scheme = "http"
	}
	base := scheme + "://" + host + "/v2/" + repository
	tag := strings.ReplaceAll(version, "+", "_") // OCI tags cannot hold '+'; helm pushes '_'
	var token string
	b, resp, err := f.get(ctx, base+"/manifests/"+tag, ociManifestType, "")
	if resp != nil && resp.StatusCode == http.StatusUnauthorized {
		if token, err = f.anonymousToken(ctx, resp.Header.Get("WWW-Authenticate")); err != nil {
			return nil, fmt.Errorf("%s: %w", repo, err)
		}
		b, _, err = f.get(ctx, base+"/manifests/"+tag, ociManifestType, token)
	}
	if err != nil {
		return nil, err
	}
	var m struct {
		Layers []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"layers"`
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s:%s: manifest: %v", Key(repo, name), tag, oneLine(err.Error()))
	}
	for _, l := range m.Layers {
		if l.MediaType != helmChartLayerTyp {
			continue
		}
		blob, _, err := f.get(ctx, base+"/blobs/"+l.Digest, "", token)
		if err != nil {
			return nil, err
		}
		if Digest(blob) != l.Digest {
			return nil, fmt.Errorf("%s:%s: the chart layer does not match its digest %s", Key(repo, name), tag, l.Digest)
		}
		return blob, nil
	}
	return nil, fmt.Errorf("%s:%s: no Helm chart layer (%s) in the manifest", Key(repo, name), tag, helmChartLayerTyp)
}

// bearerParam matches one parameter of a WWW-Authenticate challenge.
var bearerParam = regexp.MustCompile(`(\w+)="([^"]*)"`)

// anonymousToken asks the registry's token service named in a Bearer
// challenge for an anonymous pull token.
func (f *Fetcher) anonymousToken(ctx context.Context, challenge string) (string, error) {
	if !strings.HasPrefix(strings.ToLower(challenge), "bearer ") {
		return "", errors.New("the registry wants credentials (only anonymous pulls are supported)")
	}
	params := map[string]string{}
	for _, m := range bearerParam.FindAllStringSubmatch(challenge, -1) {
		params[m[1]] = m[2]
	}
	u, err := url.Parse(params["realm"])
	if err != nil || params["realm"] == "" {
		return "", errors.New("the registry's token challenge has no realm")
	}
	q := u.Query()
	for _, k := range []string{"service", "scope"} {
		if params[k] != "" {
			q.Set(k, params[k])
		}
	}
	u.RawQuery = q.Encode()
	b, _, err := f.get(ctx, u.String(), "", "")
	if err != nil {
		return "", err
	}
	var tok struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
	}
	if err := yaml.Unmarshal(b, &tok); err != nil {
		return "", err
	}
	if tok.Token != "" {
		return tok.Token, nil
	}
	return tok.AccessToken, nil
}

// redactURL drops the user information of a URL for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
