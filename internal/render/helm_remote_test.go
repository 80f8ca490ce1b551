package render

import (
	"context"
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
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/snapply/snapply/internal/chartrepo"
	"github.com/snapply/snapply/internal/chartrepo/chartrepotest"
)

// packageChart packages the demo chart at version with greeting as its
// default value, and returns the .tgz.
func packageChart(t *testing.T, version, greeting string) []byte {
	t.Helper()
	src := t.TempDir()
	files := with(demoChart, map[string]string{
		"charts/demo/Chart.yaml":  "apiVersion: v2\nname: demo\nversion: " + version + "\n",
		"charts/demo/values.yaml": "greeting: " + greeting + "\nnested: {a: x, b: y}\nlist: [z]\n",
	})
	write(t, src, files)
	c, err := loader.LoadDir(filepath.Join(src, "charts/demo"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	p, err := chartutil.Save(c, out)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// chartServer is an HTTP chart repository: index.yaml and one .tgz per
// version, which a test may replace.
type chartServer struct {
	*httptest.Server
	mu     sync.Mutex
	charts map[string][]byte // version -> tgz
}

func newChartServer(t *testing.T) *chartServer {
	s := &chartServer{charts: map[string][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if r.URL.Path == "/charts/index.yaml" {
			fmt.Fprintf(w, "apiVersion: v1\nentries:\n  demo:\n")
			for v := range s.charts {
				fmt.Fprintf(w, "  - version: %s\n    urls: [demo-%s.tgz]\n", v, v)
			}
			return
		}
		for v, b := range s.charts {
			if r.URL.Path == "/charts/demo-"+v+".tgz" {
				_, _ = w.Write(b)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *chartServer) set(version string, tgz []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.charts[version] = tgz
}

// renderRemote renders a kustomization with one remote chart entry, with a
// chart cache of its own; with lock set, it records digests instead of
// checking them and saves the lock file.
func renderRemote(t *testing.T, root, cache string, lock bool) (string, error) {
	t.Helper()
	rc := &RemoteCharts{Fetcher: &chartrepo.Fetcher{CacheDir: cache}}
	if lock {
		rc.Lock = &chartrepo.Locks{}
	}
	objs, err := Render(context.Background(), root, Options{Root: root, Charts: rc})
	if err != nil {
		return "", err
	}
	if lock {
		if err := rc.Lock.Save(); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	for _, o := range objs {
		g, _ := o.Obj.Object["data"].(map[string]any)["greeting"].(string)
		out = append(out, o.Ref.String()+" "+o.Source.String()+" greeting="+g)
	}
	return strings.Join(out, "\n"), nil
}

// TestRemoteCharts renders charts from an HTTP chart repository and an OCI
// registry: `snapply lock` records their digests, plan and apply check
// them; a missing entry, a changed chart and an unpinned version are each
// one line of error.
func TestRemoteCharts(t *testing.T) {
	httpRepo := newChartServer(t)
	httpRepo.set("1.0.0", packageChart(t, "1.0.0", "from-http"))
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	chartrepotest.PushChart(t, reg.URL, "charts/demo", "1.0.0", packageChart(t, "1.0.0", "from-oci"))
	ociRepo := "oci://" + strings.TrimPrefix(reg.URL, "http://") + "/charts"

	for _, src := range []struct{ name, repo, greeting string }{
		{"http", httpRepo.URL + "/charts", "from-http"},
		{"oci", ociRepo, "from-oci"},
	} {
		t.Run(src.name, func(t *testing.T) {
			root, cache := t.TempDir(), t.TempDir()
			write(t, root, map[string]string{"kustomization.yaml": "helmCharts:\n- name: demo\n  repo: " + src.repo + "\n  version: 1.0.0\n  releaseName: r\n"})

			_, err := renderRemote(t, root, cache, false)
			wantErr := "render: kustomization.yaml:2: helm chart demo: " + src.repo + "/demo@1.0.0 is not in snapply.lock: run `snapply lock PATH` to add it"
			if err == nil || err.Error() != wantErr {
				t.Fatalf("without a lock entry:\n got %v\nwant %s", err, wantErr)
			}

			if _, err := renderRemote(t, root, cache, true); err != nil {
				t.Fatal(err)
			}
			lock, err := os.ReadFile(filepath.Join(root, "snapply.lock"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(lock), src.repo+"/demo:\n    1.0.0: sha256:") {
				t.Errorf("lock file:\n%s", lock)
			}

			got, err := renderRemote(t, root, cache, false)
			if err != nil {
				t.Fatal(err)
			}
			if want := "configmap/r-cm -n default demo@1.0.0 templates/cm.yaml (kustomization.yaml:2) greeting=" + src.greeting; got != want {
				t.Errorf("got %s\nwant %s", got, want)
			}

			// A second render needs no download: the cached chart matches the lock.
			entries, _ := os.ReadDir(cache)
			if len(entries) != 1 {
				t.Errorf("cache holds %d files, want 1", len(entries))
			}
		})
	}

	t.Run("digest mismatch", func(t *testing.T) {
		repo := newChartServer(t)
		repo.set("1.0.0", packageChart(t, "1.0.0", "first"))
		root := t.TempDir()
		write(t, root, map[string]string{"kustomization.yaml": "helmCharts:\n- name: demo\n  repo: " + repo.URL + "/charts\n  version: 1.0.0\n"})
		if _, err := renderRemote(t, root, t.TempDir(), true); err != nil {
			t.Fatal(err)
		}
		repo.set("1.0.0", packageChart(t, "1.0.0", "republished"))
		_, err := renderRemote(t, root, t.TempDir(), false)
		if err == nil || !strings.Contains(err.Error(), "does not match snapply.lock") || !strings.Contains(err.Error(), "the chart changed under the same version") || strings.Contains(err.Error(), "\n") {
			t.Errorf("err = %v, want one line saying the digest does not match snapply.lock", err)
		}
	})

	t.Run("cached chart, repository down", func(t *testing.T) {
		repo := newChartServer(t)
		repo.set("1.0.0", packageChart(t, "1.0.0", "cached"))
		root, cache := t.TempDir(), t.TempDir()
		write(t, root, map[string]string{"kustomization.yaml": "helmCharts:\n- name: demo\n  repo: " + repo.URL + "/charts\n  version: 1.0.0\n"})
		if _, err := renderRemote(t, root, cache, true); err != nil {
			t.Fatal(err)
		}
		repo.Close()
		if got, err := renderRemote(t, root, cache, false); err != nil || !strings.HasSuffix(got, "greeting=cached") {
			t.Errorf("from the cache: %q, %v", got, err)
		}
	})

	for _, v := range []string{"", "^1.0.0", "1.x", "latest"} {
		t.Run("unpinned "+v, func(t *testing.T) {
			root := t.TempDir()
			entry := "helmCharts:\n- name: demo\n  repo: " + httpRepo.URL + "/charts\n"
			if v != "" {
				entry += "  version: " + v + "\n"
			}
			write(t, root, map[string]string{"kustomization.yaml": entry})
			_, err := renderRemote(t, root, t.TempDir(), true)
			if err == nil || !strings.Contains(err.Error(), "remote charts must be pinned to an exact version") || !strings.HasPrefix(err.Error(), "render: kustomization.yaml:2: helm chart demo: ") {
				t.Errorf("err = %v, want one line saying the version must be exact", err)
			}
		})
	}
}
