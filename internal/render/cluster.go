package render

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// Cluster is what rendering a Helm chart reads from the cluster it is
// rendered for. It is only read.
type Cluster interface {
	// ServerVersion returns the API server's gitVersion ("v1.36.3"), for
	// .Capabilities.KubeVersion.
	ServerVersion(ctx context.Context) (string, error)
	// APIVersions returns what .Capabilities.APIVersions holds: every
	// group/version the server serves ("apps/v1") and every kind in it
	// ("apps/v1/Deployment").
	APIVersions(ctx context.Context) ([]string, error)
	// ResourceFor returns a client for the resource of kind in apiVersion
	// and whether it is namespaced, for Helm's lookup; a nil client and no
	// error when the server does not serve that kind (lookup then finds
	// nothing, as with Helm).
	ResourceFor(ctx context.Context, apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error)
}

// errLookupWrite is returned when a chart's template tries to write
// through lookup's client.
var errLookupWrite = errors.New("helm lookup is read-only: rendering never writes to the cluster")

// readOnlyProvider is Helm's engine.ClientProvider over a Cluster; the
// clients it returns only read.
type readOnlyProvider struct {
	ctx     context.Context
	cluster Cluster
}

// GetClientFor returns a read-only client for kind in apiVersion.
func (p readOnlyProvider) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	c, namespaced, err := p.cluster.ResourceFor(p.ctx, apiVersion, kind)
	if err != nil {
		return nil, false, err
	}
	if c == nil {
		return notServed{}, false, nil
	}
	return readOnlyNamespaceable{readOnly{c}, c}, namespaced, nil
}

// notServed is the lookup client of a kind the server does not serve:
// nothing is found, as Helm finds nothing.
type notServed struct {
	dynamic.NamespaceableResourceInterface
}

func (notServed) Namespace(string) dynamic.ResourceInterface { return notServed{} }

func (notServed) Get(_ context.Context, name string, _ metav1.GetOptions, _ ...string) (*unstructured.Unstructured, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{}, name)
}

func (notServed) List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{}, "")
}

// readOnly is a dynamic.ResourceInterface whose writes fail.
type readOnly struct{ dynamic.ResourceInterface }

func (readOnly) Create(context.Context, *unstructured.Unstructured, metav1.CreateOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, errLookupWrite
}

func (readOnly) Update(context.Context, *unstructured.Unstructured, metav1.UpdateOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, errLookupWrite
}

func (readOnly) UpdateStatus(context.Context, *unstructured.Unstructured, metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return nil, errLookupWrite
}

func (readOnly) Delete(context.Context, string, metav1.DeleteOptions, ...string) error {
	return errLookupWrite
}

func (readOnly) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return errLookupWrite
}

func (readOnly) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, errLookupWrite
}

func (readOnly) Apply(context.Context, string, *unstructured.Unstructured, metav1.ApplyOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, errLookupWrite
}

func (readOnly) ApplyStatus(context.Context, string, *unstructured.Unstructured, metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	return nil, errLookupWrite
}

func (readOnly) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, errLookupWrite
}

// readOnlyNamespaceable is a read-only dynamic.NamespaceableResourceInterface.
type readOnlyNamespaceable struct {
	readOnly
	c dynamic.NamespaceableResourceInterface
}

// Namespace returns the read-only client of one namespace.
func (n readOnlyNamespaceable) Namespace(ns string) dynamic.ResourceInterface {
	return readOnly{n.c.Namespace(ns)}
}
