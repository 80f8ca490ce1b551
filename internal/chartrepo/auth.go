package chartrepo

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	dockerconfig "github.com/docker/cli/cli/config"
	"github.com/google/go-containerregistry/pkg/authn"
	"helm.sh/helm/v4/pkg/helmpath"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/text"
)

// Credentials say where a Fetcher finds credentials for private chart
// sources: the files that `helm registry login`, `helm repo add
// --username` and `docker login` write, so that a machine (or a workflow
// step such as docker/login-action) that can pull a chart with helm can
// with snapply. snapply never writes them, and never prints what they
// hold.
type Credentials struct {
	// RegistryConfig is Helm's registry config (`helm registry login`), a
	// file in Docker's config.json format; empty or missing: none.
	RegistryConfig string
	// RepositoryConfig is Helm's repositories.yaml (`helm repo add
	// --username --password`): the username and password of the entry
	// whose URL is a chart's repo are sent to that repository's host (to
	// every host with pass_credentials_all); empty or missing: none.
	RepositoryConfig string
	// Docker also reads Docker's config ($DOCKER_CONFIG/config.json, else
	// ~/.docker/config.json, with its credential helpers) and, without it,
	// Podman's auth file, for OCI registries. Helm's registry config comes
	// first.
	Docker bool
}

// DefaultCredentials returns Helm's files where Helm looks for them
// ($HELM_REGISTRY_CONFIG and $HELM_REPOSITORY_CONFIG, else under Helm's
// config home) and Docker's config.
func DefaultCredentials(getenv func(string) string) Credentials {
	c := Credentials{
		RegistryConfig:   getenv("HELM_REGISTRY_CONFIG"),
		RepositoryConfig: getenv("HELM_REPOSITORY_CONFIG"),
		Docker:           true,
	}
	if c.RegistryConfig == "" {
		c.RegistryConfig = helmpath.ConfigPath("registry", "config.json")
	}
	if c.RepositoryConfig == "" {
		c.RepositoryConfig = helmpath.ConfigPath("repositories.yaml")
	}
	return c
}

// registryAuth returns the authenticator for an OCI registry, and where
// it came from ("" when anonymous).
func (c Credentials) registryAuth(target authn.Resource) (authn.Authenticator, string, error) {
	if c.RegistryConfig != "" {
		a, err := fileAuth(c.RegistryConfig, target.RegistryStr())
		if err != nil {
			return nil, "", err
		}
		if a != nil {
			return a, c.RegistryConfig + " (helm registry login)", nil
		}
	}
	if c.Docker {
		a, err := authn.DefaultKeychain.Resolve(target)
		if err != nil {
			return nil, "", fmt.Errorf("docker config: %v", text.OneLine(err.Error()))
		}
		if a != authn.Anonymous {
			return a, "the Docker config (docker login)", nil
		}
	}
	return authn.Anonymous, "", nil
}

// fileAuth reads the credentials for host from a file in Docker's
// config.json format; nil when it holds none (or does not exist).
func fileAuth(path, host string) (authn.Authenticator, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("registry config %s: %w", path, unwrapPathErr(err))
	}
	defer f.Close()
	cf, err := dockerconfig.LoadFromReader(f)
	if err != nil {
		return nil, fmt.Errorf("registry config %s: %v", path, text.OneLine(err.Error()))
	}
	cf.Filename = path
	ac, err := cf.GetAuthConfig(host)
	if err != nil {
		return nil, fmt.Errorf("registry config %s: %s: %v", path, host, text.OneLine(err.Error()))
	}
	if ac.Username == "" && ac.Password == "" && ac.Auth == "" && ac.IdentityToken == "" && ac.RegistryToken == "" {
		return nil, nil
	}
	return authn.FromConfig(authn.AuthConfig{
		Username: ac.Username, Password: ac.Password, Auth: ac.Auth,
		IdentityToken: ac.IdentityToken, RegistryToken: ac.RegistryToken,
	}), nil
}

// repoAuth is the basic authentication of an HTTP chart repository.
type repoAuth struct {
	username, password string
	// host is the repository's host: the only one the credentials go to,
	// unless all is set (pass_credentials_all).
	host string
	all  bool
}

// apply sets the credentials on req when they are for its host.
func (a *repoAuth) apply(req *http.Request) {
	if a == nil || (!a.all && req.URL.Host != a.host) {
		return
	}
	req.SetBasicAuth(a.username, a.password)
}

// repositoryFile is the part of Helm's repositories.yaml that is read
// (helm.sh/helm/v4/pkg/repo/v1.File, whose package would bring Helm's
// getters and provenance checks along).
type repositoryFile struct {
	Repositories []struct {
		URL                string `json:"url"`
		Username           string `json:"username"`
		Password           string `json:"password"`
		PassCredentialsAll bool   `json:"pass_credentials_all"`
	} `json:"repositories"`
}

// repositoryAuth returns the credentials Helm's repositories.yaml holds
// for the chart repository at repoURL, nil when none.
func (c Credentials) repositoryAuth(repoURL string) (*repoAuth, error) {
	if c.RepositoryConfig == "" {
		return nil, nil
	}
	if _, err := os.Stat(c.RepositoryConfig); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	b, err := os.ReadFile(c.RepositoryConfig)
	if err != nil {
		return nil, fmt.Errorf("helm repositories %s: %w", c.RepositoryConfig, unwrapPathErr(err))
	}
	var f repositoryFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("helm repositories %s: %v", c.RepositoryConfig, text.OneLine(err.Error()))
	}
	want := strings.TrimSuffix(repoURL, "/")
	for _, e := range f.Repositories {
		if strings.TrimSuffix(e.URL, "/") != want || (e.Username == "" && e.Password == "") {
			continue
		}
		u, err := url.Parse(want)
		if err != nil {
			return nil, fmt.Errorf("repo %q: %w", redactURL(repoURL), parseError(err))
		}
		return &repoAuth{username: e.Username, password: e.Password, host: u.Host, all: e.PassCredentialsAll}, nil
	}
	return nil, nil
}

// unwrapPathErr drops the path an *os.PathError repeats.
func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// loginHint says how to give snapply credentials for host.
func loginHint(host string) string {
	return fmt.Sprintf("log in first: `helm registry login %s` or `docker login %s` (in a workflow, docker/login-action before snapply)", host, host)
}
