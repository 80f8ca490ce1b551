// Package chartrepo fetches Helm charts from remote sources, pinned to an
// exact version and checked against a lock file: an HTTP chart repository
// (its index.yaml) or an OCI registry (oci://). A chart is downloaded once
// into a cache directory, named by its digest; the lock file (snapply.lock,
// next to the kustomization that lists the chart) records chart -> version
// -> sha256, so that plan and apply render the same bytes. Only
// `snapply lock` writes the lock file. Private repositories and
// registries are read with the credentials Helm and Docker keep
// (Credentials).
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

	gname "github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/text"
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
	// Only its Transport is used for OCI registries.
	Client *http.Client
	// Credentials say where credentials for private repositories and
	// registries are read from; the zero value reads none.
	Credentials Credentials
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

// get GETs u, with auth's credentials when they are for u's host, and
// returns the body of a 200.
func (f *Fetcher) get(ctx context.Context, u string, auth *repoAuth) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	auth.apply(req)
	resp, err := f.client().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxChartSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxChartSize {
		return nil, fmt.Errorf("GET %s: larger than %d MiB", redactURL(u), maxChartSize>>20)
	}
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("GET %s: %s", redactURL(u), resp.Status)
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			if auth == nil {
				msg += ": the repository wants credentials: add it with `helm repo add NAME URL --username ... --password ...` (Helm's repositories.yaml), which snapply reads"
			} else {
				msg += ": the repository refuses the username and password of Helm's repositories.yaml"
			}
		}
		return nil, errors.New(msg)
	}
	return b, nil
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
		return nil, fmt.Errorf("repo %q: %w", redactURL(repo), parseError(err))
	}
	auth, err := f.Credentials.repositoryAuth(repo)
	if err != nil {
		return nil, err
	}
	b, err := f.get(ctx, base.JoinPath("index.yaml").String(), auth)
	if err != nil {
		return nil, err
	}
	var idx index
	if err := yaml.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("%s: index.yaml: %v", redactURL(repo), text.OneLine(err.Error()))
	}
	for _, e := range idx.Entries[name] {
		if strings.TrimPrefix(e.Version, "v") != strings.TrimPrefix(version, "v") || len(e.URLs) == 0 {
			continue
		}
		u, err := base.Parse(e.URLs[0])
		if err != nil {
			return nil, fmt.Errorf("%s: index.yaml: url %q: %w", redactURL(repo), redactURL(e.URLs[0]), parseError(err))
		}
		return f.get(ctx, u.String(), auth)
	}
	return nil, fmt.Errorf("%s: no chart %s version %s in index.yaml", redactURL(repo), name, version)
}

// helmChartLayerType is the media type of a Helm chart's layer in an OCI
// registry.
const helmChartLayerType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"

// ociTimeout bounds the download of one chart from an OCI registry.
const ociTimeout = 5 * time.Minute

// fetchOCI downloads a chart from an OCI registry with
// go-containerregistry: the manifest of tag version in repository
// <path>/<name>, then its chart layer (checked against its digest). The
// credentials for the registry come from f.Credentials; without any, the
// pull is anonymous (with the anonymous token a registry may hand out).
// localhost and loopback registries are spoken to over plain HTTP.
func (f *Fetcher) fetchOCI(ctx context.Context, repo, name, version string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, ociTimeout)
	defer cancel()
	tag := strings.ReplaceAll(version, "+", "_") // OCI tags cannot hold '+'; helm pushes '_'
	where := Key(repo, name) + ":" + tag
	ref, err := gname.NewTag(strings.TrimPrefix(Key(repo, name), "oci://")+":"+tag, gname.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", where, text.OneLine(err.Error()))
	}
	auth, from, err := f.Credentials.registryAuth(ref.Context())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuth(auth), remote.WithUserAgent("snapply")}
	if f.Client != nil && f.Client.Transport != nil {
		opts = append(opts, remote.WithTransport(f.Client.Transport))
	}
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return nil, ociError(where, ref.RegistryStr(), from, err)
	}
	var m struct {
		Layers []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"layers"`
	}
	if err := yaml.Unmarshal(desc.Manifest, &m); err != nil {
		return nil, fmt.Errorf("%s: manifest: %v", where, text.OneLine(err.Error()))
	}
	for _, l := range m.Layers {
		if l.MediaType != helmChartLayerType {
			continue
		}
		layer, err := remote.Layer(ref.Context().Digest(l.Digest), opts...)
		if err != nil {
			return nil, ociError(where, ref.RegistryStr(), from, err)
		}
		rc, err := layer.Compressed()
		if err != nil {
			return nil, ociError(where, ref.RegistryStr(), from, err)
		}
		defer rc.Close()
		blob, err := io.ReadAll(io.LimitReader(rc, maxChartSize+1))
		if err != nil {
			return nil, ociError(where, ref.RegistryStr(), from, err)
		}
		if len(blob) > maxChartSize {
			return nil, fmt.Errorf("%s: the chart is larger than %d MiB", where, maxChartSize>>20)
		}
		if Digest(blob) != l.Digest {
			return nil, fmt.Errorf("%s: the chart layer does not match its digest %s", where, l.Digest)
		}
		return blob, nil
	}
	return nil, fmt.Errorf("%s: no Helm chart layer (%s) in the manifest", where, helmChartLayerType)
}

// ociError says in one line why a registry request failed, and, when the
// registry refused, whose credentials it refused or how to give some.
func ociError(where, host, from string, err error) error {
	var terr *transport.Error
	if errors.As(err, &terr) && (terr.StatusCode == http.StatusUnauthorized || terr.StatusCode == http.StatusForbidden) {
		if from == "" {
			return fmt.Errorf("%s: the registry refuses an anonymous pull (%d %s): %s", where, terr.StatusCode, http.StatusText(terr.StatusCode), loginHint(host))
		}
		return fmt.Errorf("%s: the registry refuses the credentials for %s from %s (%d %s)", where, host, from, terr.StatusCode, http.StatusText(terr.StatusCode))
	}
	return fmt.Errorf("%s: %v", where, text.OneLine(err.Error()))
}

// userinfo matches the user information of a URL that does not parse.
var userinfo = regexp.MustCompile(`://[^/@]*@`)

// redactURL drops the user information of a URL for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return userinfo.ReplaceAllString(s, "://")
	}
	if u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}

// parseError drops the URL that a *url.Error repeats: it may hold a
// password.
func parseError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
