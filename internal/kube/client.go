package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Options tunes the client.
type Options struct {
	// QPS and Burst bound client-side request rates. The defaults are high
	// enough that they never bound a plan or an apply.
	QPS   float32
	Burst int
	// Timeout bounds each request when the flags have no --request-timeout;
	// zero means no per-request timeout (the command's context still bounds
	// the whole run).
	Timeout time.Duration
	// UserAgent is sent with every request.
	UserAgent string
}

// DefaultOptions returns the options snapply runs with.
func DefaultOptions() Options {
	return Options{QPS: 2000, Burst: 4000, Timeout: 60 * time.Second, UserAgent: "snapply"}
}

// Client is a connection to one API server.
type Client struct {
	// Config is the REST config every client here is built from.
	Config *rest.Config
	// Dynamic reads and writes objects of any kind.
	Dynamic dynamic.Interface
	// Metadata reads only the metadata of objects of any kind.
	Metadata metadata.Interface
	// Discovery lists the server's API resources (cached; reset with Mapper).
	Discovery discovery.CachedDiscoveryInterface
	// Mapper maps kinds to resources; it re-reads discovery on a miss.
	Mapper meta.ResettableRESTMapper
	// Context is the kubeconfig context in use, empty for in-cluster config.
	Context string
	// Namespace is the default namespace set by --namespace or the
	// kubeconfig context; empty when neither sets one.
	Namespace string

	schemas schemaCache
	// GitVersion is the API server's gitVersion, once Ping succeeded.
	GitVersion string
}

// NewClient builds a client from kubectl-style flags. Their
// --request-timeout, when they have one, is used as it is (0: none);
// opts.Timeout otherwise. When no kubeconfig names a cluster and the process
// runs outside a cluster, the error is a *NoKubeconfigError.
func NewClient(flags *genericclioptions.ConfigFlags, opts Options) (*Client, error) {
	loader := flags.ToRawKubeConfigLoader()
	if err := checkKubeconfig(flags, loader); err != nil {
		return nil, err
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	if flags.Timeout == nil || *flags.Timeout == "" {
		cfg.Timeout = opts.Timeout
	}
	if opts.UserAgent != "" {
		cfg.UserAgent = opts.UserAgent
	}
	c, err := NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if raw, err := loader.RawConfig(); err == nil {
		c.Context = raw.CurrentContext
		if flags.Context != nil && *flags.Context != "" {
			c.Context = *flags.Context
		}
	}
	if ns, explicit, err := loader.Namespace(); err == nil && explicit {
		c.Namespace = ns
	}
	return c, nil
}

// NewForConfig builds a client from a REST config as it is.
func NewForConfig(cfg *rest.Config) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout > 0 {
		timeout := cfg.Timeout
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return &timeoutTransport{next: rt, timeout: timeout}
		})
	}
	if cfg.WarningHandlerWithContext == nil && cfg.WarningHandler == nil {
		cfg.WarningHandlerWithContext = warningCollector{}
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("api server %s: %w", cfg.Host, err)
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("api server %s: %w", cfg.Host, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("api server %s: %w", cfg.Host, err)
	}
	cached := memory.NewMemCacheClient(dc)
	return &Client{
		Config:    cfg,
		Dynamic:   dyn,
		Metadata:  md,
		Discovery: cached,
		Mapper:    restmapper.NewDeferredDiscoveryRESTMapper(cached),
	}, nil
}

// ServerHash identifies the API server without naming it: the first 16 hex
// characters of the SHA-256 of its URL.
func (c *Client) ServerHash() string {
	sum := sha256.Sum256([]byte(c.Config.Host))
	return hex.EncodeToString(sum[:])[:16]
}

// Ping checks that the API server answers, so that an unreachable server is
// reported once, up front, rather than once per object, and keeps its
// version in GitVersion.
func (c *Client) Ping(ctx context.Context) error {
	v, err := c.Discovery.ServerVersion()
	if err != nil {
		return Unreachable(c.Config.Host, err)
	}
	c.GitVersion = v.GitVersion
	return ctx.Err()
}
