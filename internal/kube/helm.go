package kube

import (
	"context"
	"path"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// ServerVersion returns the API server's gitVersion ("v1.36.3").
func (c *Client) ServerVersion(ctx context.Context) (string, error) {
	v, err := c.Discovery.ServerVersion()
	if err != nil {
		return "", Unreachable(c.Config.Host, err)
	}
	return v.GitVersion, ctx.Err()
}

// APIVersions returns every group/version the server serves and every
// kind in each ("apps/v1", "apps/v1/Deployment"), sorted: what Helm's
// .Capabilities.APIVersions holds when it talks to a cluster. A group
// whose discovery fails is left out, as Helm leaves it out.
func (c *Client) APIVersions(ctx context.Context) ([]string, error) {
	groups, resources, err := c.Discovery.ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, Unreachable(c.Config.Host, err)
	}
	seen := map[string]bool{}
	for _, g := range groups {
		for _, gv := range g.Versions {
			seen[gv.GroupVersion] = true
		}
	}
	for _, r := range resources {
		for _, res := range r.APIResources {
			seen[path.Join(r.GroupVersion, res.Kind)] = true
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out, ctx.Err()
}

// ResourceFor returns the dynamic client of kind in apiVersion and whether
// it is namespaced; nil and no error when the server does not serve it.
func (c *Client) ResourceFor(ctx context.Context, apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	m, err := c.Mapping(gvk)
	if meta.IsNoMatchError(err) {
		return nil, false, ctx.Err()
	}
	if err != nil {
		return nil, false, err
	}
	return c.Dynamic.Resource(m.Resource), m.Scope.Name() == meta.RESTScopeNameNamespace, ctx.Err()
}
