package engine

import (
	"context"

	"github.com/snapply/snapply/internal/chartrepo"
	"github.com/snapply/snapply/internal/render"
)

// remoteCharts is where a run fetches remote Helm charts: the chart cache
// of the environment.
func (e *Engine) remoteCharts() *render.RemoteCharts {
	return &render.RemoteCharts{Fetcher: &chartrepo.Fetcher{CacheDir: chartrepo.DefaultCacheDir(e.getenv), Credentials: chartrepo.DefaultCredentials(e.getenv)}}
}

// LockCharts renders path without a cluster, downloading every remote Helm
// chart it lists, and writes their digests into the lock file
// (snapply.lock) next to each kustomization that lists one; the entries
// already there are kept. It returns the lock files written, and is the
// only writer of lock files: plan and apply only read them.
func (e *Engine) LockCharts(ctx context.Context, path string) ([]string, error) {
	locks := &chartrepo.Locks{}
	charts := e.remoteCharts()
	charts.Lock = locks
	if _, err := render.Render(ctx, path, render.Options{AllowEmpty: true, Charts: charts}); err != nil {
		return nil, err
	}
	if err := locks.Save(); err != nil {
		return nil, err
	}
	return locks.Paths(), nil
}
