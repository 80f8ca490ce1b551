package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Scope reports whether the server serves gvk and whether it is namespaced.
func (c *Client) Scope(gvk schema.GroupVersionKind) (served, namespaced bool, err error) {
	m, err := c.Mapping(gvk)
	if meta.IsNoMatchError(err) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return true, m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// DryRunApply server-side applies obj as snapply with DryRun=All.
func (c *Client) DryRunApply(ctx context.Context, obj *unstructured.Unstructured, force bool) (*unstructured.Unstructured, []string, error) {
	ctx, warnings := WithWarnings(ctx)
	m, err := c.Mapping(obj.GroupVersionKind())
	if err != nil {
		return nil, nil, err
	}
	out, err := c.Apply(ctx, obj, m, ApplyOptions{Force: force, DryRun: true})
	return out, warnings(), err
}

// Get reads the live object with obj's identity, in obj's API version; nil
// and no error when it does not exist.
func (c *Client) Get(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	m, err := c.Mapping(obj.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	out, err := c.Resource(m, obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, Unreachable(c.Config.Host, err)
	}
	return out, nil
}
