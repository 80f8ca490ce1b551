package engine_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/testenv"
)

// env is the package's API server, started once in TestMain.
var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// request is one request a client sent.
type request struct {
	method, path string
	dryRun       bool
}

// counter is a transport wrapper that records every request.
type counter struct {
	mu   sync.Mutex
	reqs []request
}

func (c *counter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		c.mu.Lock()
		c.reqs = append(c.reqs, request{method: r.Method, path: r.URL.Path, dryRun: r.URL.Query().Get("dryRun") != ""})
		c.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// reset forgets the requests so far.
func (c *counter) reset() {
	c.mu.Lock()
	c.reqs = nil
	c.mu.Unlock()
}

// naming returns the requests that name the object name of resource in
// namespace ns (GET, PATCH, dry run), leaving out LISTs.
func (c *counter) naming(resource, ns, name string) []request {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []request
	suffix := "/namespaces/" + ns + "/" + resource + "/" + name
	if ns == "" {
		suffix = "/" + resource + "/" + name
	}
	for _, r := range c.reqs {
		if strings.HasSuffix(r.path, suffix) || strings.Contains(r.path, suffix+"/") {
			out = append(out, r)
		}
	}
	return out
}

// dryRuns counts the dry-run requests.
func (c *counter) dryRuns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, r := range c.reqs {
		if r.dryRun {
			n++
		}
	}
	return n
}

// fixture is one test's inventory: its namespace, manifests, store and
// the counting client.
type fixture struct {
	t        *testing.T
	env      *testenv.Env
	wait     bool // apply waits for readiness
	ns       string
	dir      string
	store    string
	requests *counter
	progress []string
	mu       sync.Mutex
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureIn(t, env)
}

// newFixtureIn is newFixture on the API server of e.
func newFixtureIn(t *testing.T, e *testenv.Env) *fixture {
	t.Helper()
	return &fixture{t: t, env: e, ns: e.Namespace(t), dir: t.TempDir(), store: filepath.Join(t.TempDir(), "s.db"), requests: &counter{}}
}

// write sets the manifests: name -> YAML, with NS replaced by the namespace.
func (f *fixture) write(files map[string]string) {
	f.t.Helper()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(f.dir, name), []byte(strings.ReplaceAll(text, "NS", f.ns)), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) engine() *engine.Engine {
	return &engine.Engine{
		NewClient: func() (*kube.Client, error) {
			cfg := rest.CopyConfig(f.env.Config)
			cfg.Wrap(f.requests.wrap)
			return kube.NewForConfig(cfg)
		},
		Progress: func(e engine.Event) {
			f.mu.Lock()
			f.progress = append(f.progress, e.Message)
			f.mu.Unlock()
		},
	}
}

func (f *fixture) options() engine.Options {
	o := engine.DefaultOptions()
	o.StorePath = f.store
	o.Name = "inv"
	o.InventoryNamespace = f.ns
	return o
}

// plan plans the manifests, counting only the requests of the plan.
func (f *fixture) plan(o engine.Options) *plan.Plan {
	f.t.Helper()
	f.requests.reset()
	p, err := f.engine().Plan(context.Background(), engine.Target{Path: f.dir}, o)
	if p != nil {
		defer p.Close()
	}
	if err != nil {
		f.t.Fatalf("plan: %v", err)
	}
	return p.Plan
}

// apply applies the manifests without waiting, and fails the test unless
// every object reached its planned state.
func (f *fixture) apply() *plan.Plan {
	f.t.Helper()
	f.requests.reset()
	ctx := context.Background()
	p, err := f.engine().PrepareApply(ctx, engine.Target{Path: f.dir}, f.options(), 0)
	if p != nil {
		defer p.Close()
	}
	if err != nil {
		f.t.Fatalf("apply: %v", err)
	}
	o := engine.DefaultDeployOptions()
	o.Wait = f.wait
	o.Timeout = 2 * time.Minute
	res, err := p.Deploy(ctx, o)
	if err != nil {
		f.t.Fatalf("apply: %v", err)
	}
	if !res.OK() {
		f.t.Fatalf("apply: %+v", res.Summary)
	}
	return p.Plan
}

// change returns the change of the object named name.
func change(t *testing.T, p *plan.Plan, name string) plan.Change {
	t.Helper()
	for _, c := range p.Changes {
		if c.Ref.Name == name {
			return c
		}
	}
	t.Fatalf("no change for %s in the plan", name)
	return plan.Change{}
}
