package chartrepo_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/snapply/snapply/internal/chartrepo"
	"github.com/snapply/snapply/internal/chartrepo/chartrepotest"
)

// The credentials the private sources of these tests accept.
const (
	user     = "robot"
	password = "s3cr3t-registry-password"
	token    = "s3cr3t-bearer-token"
)

// privateRegistry is an OCI registry that wants a bearer token, which its
// token service hands out for user's password only (the way GHCR, ECR or
// Harbor do), and a plain twin of it to push charts to.
type privateRegistry struct {
	url, host string // the private registry
	push      string // the plain twin's URL
}

func newPrivateRegistry(t *testing.T) *privateRegistry {
	t.Helper()
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	plain := httptest.NewServer(reg)
	t.Cleanup(plain.Close)
	var private *httptest.Server
	private = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
				return
			}
			fmt.Fprintf(w, `{"token":%q}`, token)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="test"`, private.URL))
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(private.Close)
	return &privateRegistry{url: private.URL, host: strings.TrimPrefix(private.URL, "http://"), push: plain.URL}
}

// dockerConfig writes a config.json that holds user:pass for host.
func dockerConfig(t *testing.T, host, user, pass string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	if err := os.WriteFile(path, []byte(`{"auths":{"`+host+`":{"auth":"`+auth+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// noDocker points Docker's and Podman's config at empty places, so that
// the machine's own logins play no part.
func noDocker(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("REGISTRY_AUTH_FILE", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
}

// TestPrivateOCIRegistry pulls a chart from a registry that wants
// credentials: with those of `helm registry login` or `docker login`;
// without any, and with wrong ones, it is one line that says what to do,
// and no credential appears in it.
func TestPrivateOCIRegistry(t *testing.T) {
	noDocker(t)
	reg := newPrivateRegistry(t)
	chart := []byte("not really a chart, but bytes with a digest")
	chartrepotest.PushChart(t, reg.push, "charts/demo", "1.2.3", chart)
	repo := "oci://" + reg.host + "/charts"

	fetch := func(creds chartrepo.Credentials) error {
		t.Helper()
		f := &chartrepo.Fetcher{CacheDir: t.TempDir(), Credentials: creds}
		b, digest, err := f.Fetch(context.Background(), repo, "demo", "1.2.3", "")
		if err == nil && (string(b) != string(chart) || digest != chartrepo.Digest(chart)) {
			t.Fatalf("fetched %q (%s), want the pushed chart", b, digest)
		}
		if err != nil {
			for _, s := range []string{password, token, base64.StdEncoding.EncodeToString([]byte(user + ":" + password))} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("the error shows a credential: %v", err)
				}
			}
		}
		return err
	}

	t.Run("anonymous", func(t *testing.T) {
		err := fetch(chartrepo.Credentials{Docker: true})
		want := repo + "/demo:1.2.3: the registry refuses an anonymous pull (401 Unauthorized): log in first: `helm registry login " + reg.host + "`"
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("got %v\nwant one line starting %s", err, want)
		}
	})
	t.Run("helm registry login", func(t *testing.T) {
		if err := fetch(chartrepo.Credentials{RegistryConfig: dockerConfig(t, reg.host, user, password)}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("docker login", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Rename(dockerConfig(t, reg.host, user, password), filepath.Join(dir, "config.json")); err != nil {
			t.Fatal(err)
		}
		t.Setenv("DOCKER_CONFIG", dir)
		if err := fetch(chartrepo.Credentials{Docker: true}); err != nil {
			t.Fatal(err)
		}
		// Docker's login is not read unless asked for.
		if err := fetch(chartrepo.Credentials{}); err == nil {
			t.Error("pulled with Docker's login although Credentials.Docker is off")
		}
	})
	t.Run("helm's login comes first", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Rename(dockerConfig(t, reg.host, user, "wrong"), filepath.Join(dir, "config.json")); err != nil {
			t.Fatal(err)
		}
		t.Setenv("DOCKER_CONFIG", dir)
		if err := fetch(chartrepo.Credentials{RegistryConfig: dockerConfig(t, reg.host, user, password), Docker: true}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		cfg := dockerConfig(t, reg.host, user, "not-the-password")
		err := fetch(chartrepo.Credentials{RegistryConfig: cfg})
		want := repo + "/demo:1.2.3: the registry refuses the credentials for " + reg.host + " from " + cfg + " (helm registry login) (401 Unauthorized)"
		if err == nil || err.Error() != want {
			t.Fatalf("got %v\nwant %s", err, want)
		}
	})
	t.Run("unreadable config", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "config.json")
		os.WriteFile(cfg, []byte("{not json"), 0o600)
		err := fetch(chartrepo.Credentials{RegistryConfig: cfg})
		if err == nil || !strings.HasPrefix(err.Error(), repo+"/demo:1.2.3: registry config "+cfg+": ") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("got %v, want one line naming the config file", err)
		}
	})
}

// TestPrivateHTTPRepository pulls a chart from an HTTP repository that
// wants basic authentication, with the username and password `helm repo
// add` keeps in repositories.yaml; they are sent to the repository's host
// only, not to another host its index points at.
func TestPrivateHTTPRepository(t *testing.T) {
	chart := []byte("chart bytes")
	var mu sync.Mutex
	var elsewhereAuth []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhereAuth = append(elsewhereAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write(chart)
	}))
	t.Cleanup(elsewhere.Close)
	repoSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/charts/index.yaml":
			fmt.Fprintf(w, "apiVersion: v1\nentries:\n  demo:\n  - version: 1.0.0\n    urls: [demo-1.0.0.tgz]\n  other:\n  - version: 1.0.0\n    urls: [%s/other-1.0.0.tgz]\n", elsewhere.URL)
		case "/charts/demo-1.0.0.tgz":
			w.Write(chart)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(repoSrv.Close)
	repo := repoSrv.URL + "/charts"
	repositories := func(pass string, all bool) string {
		path := filepath.Join(t.TempDir(), "repositories.yaml")
		body := fmt.Sprintf("apiVersion: \"\"\nrepositories:\n- name: private\n  url: %s/\n  username: %s\n  password: %s\n  pass_credentials_all: %v\n- name: other\n  url: https://charts.example.com\n", repo, user, pass, all)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fetch := func(creds chartrepo.Credentials, name string) error {
		t.Helper()
		f := &chartrepo.Fetcher{CacheDir: t.TempDir(), Credentials: creds}
		b, _, err := f.Fetch(context.Background(), repo, name, "1.0.0", "")
		if err == nil && string(b) != string(chart) {
			t.Fatalf("fetched %q", b)
		}
		if err != nil && strings.Contains(err.Error(), password) {
			t.Errorf("the error shows the password: %v", err)
		}
		return err
	}

	err := fetch(chartrepo.Credentials{RepositoryConfig: filepath.Join(t.TempDir(), "none.yaml")}, "demo")
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized: the repository wants credentials: add it with `helm repo add") {
		t.Fatalf("without credentials: %v", err)
	}
	if err := fetch(chartrepo.Credentials{RepositoryConfig: repositories(password, false)}, "demo"); err != nil {
		t.Fatal(err)
	}
	err = fetch(chartrepo.Credentials{RepositoryConfig: repositories("wrong", false)}, "demo")
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized: the repository refuses the username and password of Helm's repositories.yaml") {
		t.Fatalf("wrong password: %v", err)
	}

	if err := fetch(chartrepo.Credentials{RepositoryConfig: repositories(password, false)}, "other"); err != nil {
		t.Fatal(err)
	}
	if err := fetch(chartrepo.Credentials{RepositoryConfig: repositories(password, true)}, "other"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(elsewhereAuth) != 2 || elsewhereAuth[0] != "" || !strings.HasPrefix(elsewhereAuth[1], "Basic ") {
		t.Errorf("Authorization sent to the other host: %q, want none, then (pass_credentials_all) basic", elsewhereAuth)
	}
}
