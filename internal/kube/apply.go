package kube

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// FieldManager is the name under which snapply owns the fields it applies.
const FieldManager = "snapply"

// ApplyOptions controls one server-side apply.
type ApplyOptions struct {
	// FieldManager owns the applied fields; default FieldManager.
	FieldManager string
	// Force takes fields owned by other managers instead of failing with a
	// conflict.
	Force bool
	// DryRun asks the server to run every admission and validation step and
	// return the result without persisting it.
	DryRun bool
}

// Mapping returns the REST mapping of gvk. When the kind is unknown it
// refreshes discovery once, so that a CRD created a moment ago is found.
func (c *Client) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) {
		c.Mapper.Reset()
		m, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, Unreachable(c.Config.Host, err)
	}
	return m, nil
}

// Resource returns the dynamic client for the mapping's resource in ns
// (ignored for cluster-scoped resources).
func (c *Client) Resource(m *meta.RESTMapping, ns string) dynamic.ResourceInterface {
	r := c.Dynamic.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return r.Namespace(ns)
	}
	return r
}

// Apply server-side applies obj with strict field validation and returns the
// object as the server stored it, or would store it when opts.DryRun is set.
// A transient failure (see Transient) is retried (Retry).
func (c *Client) Apply(ctx context.Context, obj *unstructured.Unstructured, m *meta.RESTMapping, opts ApplyOptions) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	manager := opts.FieldManager
	if manager == "" {
		manager = FieldManager
	}
	po := metav1.PatchOptions{
		FieldManager:    manager,
		Force:           &opts.Force,
		FieldValidation: "Strict",
	}
	if opts.DryRun {
		po.DryRun = []string{metav1.DryRunAll}
	}
	var out *unstructured.Unstructured
	_, err = Retry(ctx, func() error {
		var err error
		out, err = c.Resource(m, obj.GetNamespace()).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, po)
		return err
	})
	if err != nil {
		return nil, Unreachable(c.Config.Host, err)
	}
	return out, nil
}
