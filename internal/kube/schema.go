package kube

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/openapi3"
)

// schemaCache holds the type converters built from the server's OpenAPI v3
// documents, one per group-version.
type schemaCache struct {
	mu   sync.Mutex
	byGV map[schema.GroupVersion]*gvSchema
}

type gvSchema struct {
	once sync.Once
	tc   managedfields.TypeConverter
	err  error
}

// TypeConverter returns a converter of the objects of gv to typed values,
// built from the server's OpenAPI v3 document of gv: list items carry the
// keys the server merges them by (x-kubernetes-list-map-keys), custom
// resources included. Each group-version is read and parsed once per
// client.
func (c *Client) TypeConverter(gv schema.GroupVersion) (managedfields.TypeConverter, error) {
	c.schemas.mu.Lock()
	if c.schemas.byGV == nil {
		c.schemas.byGV = map[schema.GroupVersion]*gvSchema{}
	}
	s, ok := c.schemas.byGV[gv]
	if !ok {
		s = &gvSchema{}
		c.schemas.byGV[gv] = s
	}
	c.schemas.mu.Unlock()
	s.once.Do(func() {
		s.tc, s.err = c.typeConverter(gv)
	})
	return s.tc, s.err
}

func (c *Client) typeConverter(gv schema.GroupVersion) (managedfields.TypeConverter, error) {
	doc, err := openapi3.NewRoot(c.Discovery.OpenAPIV3()).GVSpec(gv)
	if err != nil {
		return nil, fmt.Errorf("openapi v3 schema of %s: %w", gv, err)
	}
	if doc.Components == nil {
		return nil, fmt.Errorf("openapi v3 schema of %s: no components", gv)
	}
	tc, err := managedfields.NewTypeConverter(doc.Components.Schemas, false)
	if err != nil {
		return nil, fmt.Errorf("openapi v3 schema of %s: %w", gv, err)
	}
	return tc, nil
}

// ForgetSchemas drops the type converters read so far, so that their
// memory can be reclaimed once they are no longer needed (a run analyses
// its plan once, then applies it).
func (c *Client) ForgetSchemas() {
	c.schemas.mu.Lock()
	defer c.schemas.mu.Unlock()
	c.schemas.byGV = nil
}
