package engine

import (
	"context"
	"sync"

	"k8s.io/client-go/dynamic"

	"github.com/snapply/snapply/internal/kube"
)

// lazyCluster is the run's cluster client, built and pinged on first use:
// by rendering when a Helm chart needs the cluster's capabilities or a
// lookup, else after rendering, so that a manifest error is reported
// before an unreachable server. It is the render.Cluster of a run.
type lazyCluster struct {
	newClient func() (*kube.Client, error)

	once   sync.Once
	client *kube.Client
	err    error
}

// get returns the client, building and pinging it once.
func (l *lazyCluster) get(ctx context.Context) (*kube.Client, error) {
	l.once.Do(func() {
		l.client, l.err = l.newClient()
		if l.err == nil {
			l.err = l.client.Ping(ctx)
		}
	})
	return l.client, l.err
}

// ServerVersion returns the API server's gitVersion.
func (l *lazyCluster) ServerVersion(ctx context.Context) (string, error) {
	c, err := l.get(ctx)
	if err != nil {
		return "", err
	}
	return c.ServerVersion(ctx)
}

// APIVersions returns the group/versions and group/version/kinds served.
func (l *lazyCluster) APIVersions(ctx context.Context) ([]string, error) {
	c, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return c.APIVersions(ctx)
}

// ResourceFor returns the dynamic client of kind in apiVersion.
func (l *lazyCluster) ResourceFor(ctx context.Context, apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	c, err := l.get(ctx)
	if err != nil {
		return nil, false, err
	}
	return c.ResourceFor(ctx, apiVersion, kind)
}
