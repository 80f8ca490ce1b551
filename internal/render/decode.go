package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	yaml2 "go.yaml.in/yaml/v2"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/text"
)

// maxDepth bounds the nesting of a document, aliases included.
const maxDepth = 1000

// decode decodes a stream of YAML documents (JSON is YAML) into objects, in
// order. file names the stream in Sources and errors. Empty documents (only
// comments, or null) are skipped; a List is expanded into its items. Every
// object has a kind, an apiVersion and a name.
//
// Scalars follow YAML 1.2 as kustomize reads them (on and yes are strings),
// except that a timestamp stays the string it was written as.
func decode(file string, data []byte) ([]object.Object, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	// Every node is visited once, plus what aliases expand to: bound the
	// total so that a small document cannot expand into a huge one.
	c := &converter{file: file, budget: 10*len(data) + 100_000}
	var objs []object.Object
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, yamlError(file, data, err)
		}
		if len(doc.Content) == 0 {
			continue
		}
		got, err := c.document(doc.Content[0], 0)
		if err != nil {
			return nil, err
		}
		objs = append(objs, got...)
	}
}

// converter turns yaml nodes into the JSON-compatible values of an
// unstructured object.
type converter struct {
	file   string
	budget int
}

// document returns the objects of one document (or List item) n.
func (c *converter) document(n *yaml.Node, listDepth int) ([]object.Object, error) {
	n = deref(n)
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return nil, nil // an empty document
		}
		return nil, fileError(c.file, n.Line, errors.New("document is a scalar, not an object"))
	case yaml.SequenceNode:
		return nil, fileError(c.file, n.Line, errors.New("document is a list, not an object (wrap the items in a kind: List)"))
	case yaml.MappingNode:
	default:
		return nil, fileError(c.file, n.Line, errors.New("document is not an object"))
	}
	if items := listItems(n); items != nil {
		if listDepth > 0 {
			return nil, fileError(c.file, n.Line, errors.New("a List inside a List is not supported"))
		}
		var objs []object.Object
		for _, item := range items.Content {
			got, err := c.document(item, listDepth+1)
			if err != nil {
				return nil, err
			}
			objs = append(objs, got...)
		}
		return objs, nil
	}
	v, err := c.value(n, 0)
	if err != nil {
		return nil, err
	}
	u, err := newObject(v.(map[string]any))
	if err != nil {
		return nil, fileError(c.file, n.Line, err)
	}
	return []object.Object{{Ref: object.RefOf(u), Obj: u, Source: object.Source{File: c.file, Line: n.Line}}}, nil
}

// listItems returns the items of a List document: kind List, or a kind
// ending in List with an items sequence and no name (DeploymentList, as
// kubectl get -o yaml writes). It returns nil for any other document.
func listItems(n *yaml.Node) *yaml.Node {
	kind := scalarValue(mappingValue(n, "kind"))
	if !strings.HasSuffix(kind, "List") {
		return nil
	}
	items := mappingValue(n, "items")
	if kind != "List" && (items == nil || items.Kind != yaml.SequenceNode || mappingValue(mappingValue(n, "metadata"), "name") != nil) {
		return nil
	}
	if items == nil || items.Kind != yaml.SequenceNode {
		return &yaml.Node{Kind: yaml.SequenceNode} // a List with no items
	}
	return items
}

// mappingValue returns the value of key in mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := deref(n.Content[i]); k.Kind == yaml.ScalarNode && k.Value == key {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

// scalarValue returns the text of scalar n, or "".
func scalarValue(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}

// value converts n into map[string]any, []any, string, int64, float64,
// bool or nil.
func (c *converter) value(n *yaml.Node, depth int) (any, error) {
	c.budget--
	if c.budget < 0 {
		return nil, fileError(c.file, n.Line, errors.New("document expands to too many nodes (excessive aliasing)"))
	}
	if depth > maxDepth {
		return nil, fileError(c.file, n.Line, fmt.Errorf("document is nested more than %d levels deep", maxDepth))
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fileError(c.file, n.Line, errors.New("unknown alias"))
		}
		return c.value(n.Alias, depth+1)
	case yaml.ScalarNode:
		return c.scalar(n)
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := c.value(item, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.MappingNode:
		return c.mapping(n, depth)
	default:
		return nil, fileError(c.file, n.Line, errors.New("unexpected YAML node"))
	}
}

// mapping converts a mapping, with YAML merge keys (<<): keys written in the
// mapping win over merged ones, and earlier merged mappings over later ones.
func (c *converter) mapping(n *yaml.Node, depth int) (map[string]any, error) {
	m := make(map[string]any, len(n.Content)/2)
	lines := make(map[string]int, len(n.Content)/2)
	var merged []map[string]any
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := deref(n.Content[i]), n.Content[i+1]
		if kn == nil || kn.Kind != yaml.ScalarNode {
			return nil, fileError(c.file, n.Content[i].Line, errors.New("mapping key is not a scalar"))
		}
		if kn.ShortTag() == "!!merge" {
			ms, err := c.merge(vn, depth)
			if err != nil {
				return nil, err
			}
			merged = append(merged, ms...)
			continue
		}
		key := kn.Value
		if line, dup := lines[key]; dup {
			return nil, fileError(c.file, kn.Line, fmt.Errorf("mapping key %q already defined at line %d", key, line))
		}
		v, err := c.value(vn, depth+1)
		if err != nil {
			return nil, err
		}
		m[key], lines[key] = v, kn.Line
	}
	for _, mm := range merged {
		for k, v := range mm {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
	}
	return m, nil
}

// merge returns the mappings a merge key's value names: one mapping or a
// sequence of them.
func (c *converter) merge(vn *yaml.Node, depth int) ([]map[string]any, error) {
	var nodes []*yaml.Node
	switch d := deref(vn); {
	case d == nil:
	case d.Kind == yaml.MappingNode:
		nodes = []*yaml.Node{vn}
	case d.Kind == yaml.SequenceNode:
		nodes = d.Content
	}
	if len(nodes) == 0 {
		return nil, fileError(c.file, vn.Line, errors.New("merge key (<<) needs a mapping or a list of mappings"))
	}
	var out []map[string]any
	for _, item := range nodes {
		if d := deref(item); d == nil || d.Kind != yaml.MappingNode {
			return nil, fileError(c.file, item.Line, errors.New("merge key (<<) needs a mapping or a list of mappings"))
		}
		v, err := c.value(item, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, v.(map[string]any))
	}
	return out, nil
}

// scalar converts a scalar by its resolved tag. A timestamp, a binary and a
// scalar with an unknown tag stay the text they were written as.
func (c *converter) scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool", "!!int", "!!float":
	default:
		return n.Value, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		// yaml's message quotes the value, which may be a secret.
		return nil, fileError(c.file, n.Line, fmt.Errorf("value is not a valid %s", n.ShortTag()))
	}
	switch v := v.(type) {
	case bool:
		return v, nil
	case int:
		return int64(v), nil
	case int64:
		return v, nil
	case uint64:
		if v <= math.MaxInt64 {
			return int64(v), nil
		}
		return float64(v), nil
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fileError(c.file, n.Line, errors.New("infinity and NaN are not valid JSON numbers"))
		}
		return v, nil
	default:
		return n.Value, nil
	}
}

// newObject checks that m is an object Kubernetes can identify.
func newObject(m map[string]any) (*unstructured.Unstructured, error) {
	kind, _ := m["kind"].(string)
	if kind == "" {
		return nil, errors.New("object has no kind")
	}
	apiVersion, _ := m["apiVersion"].(string)
	if apiVersion == "" {
		return nil, fmt.Errorf("%s has no apiVersion", kind)
	}
	if _, err := schema.ParseGroupVersion(apiVersion); err != nil {
		return nil, fmt.Errorf("%s has an invalid apiVersion %q", kind, apiVersion)
	}
	meta, ok := m["metadata"].(map[string]any)
	if !ok && m["metadata"] != nil {
		return nil, fmt.Errorf("%s: metadata is not a mapping", kind)
	}
	name, _ := meta["name"].(string)
	if name == "" {
		if _, ok := meta["generateName"]; ok {
			return nil, fmt.Errorf("%s has no metadata.name (generateName cannot be applied)", kind)
		}
		return nil, fmt.Errorf("%s has no metadata.name", kind)
	}
	if ns, ok := meta["namespace"]; ok && ns != nil {
		if _, ok := ns.(string); !ok {
			return nil, fmt.Errorf("%s %s: metadata.namespace is not a string", kind, name)
		}
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// yamlLine matches the line yaml.v3 puts in its errors.
var yamlLine = regexp.MustCompile(`^yaml: (?:unmarshal errors: )?line (\d+): (.*)$`)

// yamlError turns a yaml.v3 error about data into an *Error at the line it
// names. For a parser error ("did not find expected key"), yaml.v3 names the
// line before the block that holds the problem; yaml.v2 names the line
// before the problem itself, so it is asked for the line.
func yamlError(file string, data []byte, err error) error {
	msg := text.OneLine(err.Error())
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return fileError(file, 0, &rewordedError{msg: msg, err: err})
	}
	line, _ := strconv.Atoi(m[1])
	if strings.HasPrefix(m[2], "did not find expected") {
		line++
		if l := yamlV2Line(data, m[2]); l > 0 {
			line = l
		}
	}
	return fileError(file, line, &rewordedError{msg: "yaml: " + m[2], err: err})
}

// yamlV2Line returns the 1-based line of the parser error yaml.v2 finds in
// data when it is the same error as want, or 0.
func yamlV2Line(data []byte, want string) int {
	dec := yaml2.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		err := dec.Decode(&v)
		if err == nil {
			continue
		}
		m := yamlLine.FindStringSubmatch(text.OneLine(err.Error()))
		if m == nil || m[2] != want {
			return 0
		}
		line, _ := strconv.Atoi(m[1])
		return line + 1
	}
}

// rewordedError is an error with a clearer message: a YAML error with its
// line moved into the Source, or a kustomize error with paths made
// relative.
type rewordedError struct {
	msg string
	err error
}

func (e *rewordedError) Error() string { return e.msg }
func (e *rewordedError) Unwrap() error { return e.err }
