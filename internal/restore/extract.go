package restore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/secret"
)

// ExtractOwned returns the part of u that manager owned with operation
// Apply according to u's metadata.managedFields, as server-side apply
// records it (fieldsV1): "f:name" is the map key name, "k:{...}" the item
// of a list whose key fields have those values, "v:..." the item of a set
// with that value, "i:N" the item at index N, and "." the node itself. A
// node owned without children is taken whole. A Secret's stringData keys
// are taken from its data, where the server keeps their values. Entries of
// a subresource (status) are left out. Several Apply entries of the
// manager are merged.
//
// The result always holds u's apiVersion, kind, metadata.name and
// metadata.namespace, and the key fields of every list item it holds, so
// that it can be applied; it holds nothing else when manager owned nothing.
// u is not changed.
func ExtractOwned(u *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	ref := object.RefOf(u)
	entries, _, err := unstructured.NestedSlice(u.Object, "metadata", "managedFields")
	if err != nil {
		return nil, fmt.Errorf("%s: managedFields: %w", ref, err)
	}
	trie := map[string]any{}
	for i, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: managedFields[%d]: not an object", ref, i)
		}
		if m["manager"] != manager || m["operation"] != "Apply" {
			continue
		}
		if sub, _ := m["subresource"].(string); sub != "" {
			continue
		}
		if ft, ok := m["fieldsType"]; ok && ft != "FieldsV1" {
			return nil, fmt.Errorf("%s: managedFields[%d]: fieldsType %v: want FieldsV1", ref, i, ft)
		}
		f, ok := m["fieldsV1"].(map[string]any)
		if !ok {
			if m["fieldsV1"] == nil {
				continue
			}
			return nil, fmt.Errorf("%s: managedFields[%d]: fieldsV1 is not an object", ref, i)
		}
		mergeTrie(trie, f)
	}

	if sd, ok := trie["f:stringData"].(map[string]any); ok && secret.IsSecret(u) {
		// stringData is write-only: the server keeps its values in data.
		d, _ := trie["f:data"].(map[string]any)
		if d == nil {
			d = map[string]any{}
			trie["f:data"] = d
		}
		mergeTrie(d, sd)
		delete(trie, "f:stringData")
	}

	out := map[string]any{}
	if len(trie) > 0 {
		v, err := extract(u.Object, trie)
		if err != nil {
			return nil, fmt.Errorf("%s: managed fields of %s: %w", ref, manager, err)
		}
		if m, ok := v.(map[string]any); ok {
			out = m
		}
	}
	// What any applied object needs, whoever owns it.
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := u.Object[k]; ok {
			out[k] = v
		}
	}
	md, _ := out["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		out["metadata"] = md
	}
	md["name"] = u.GetName()
	if ns := u.GetNamespace(); ns != "" {
		md["namespace"] = ns
	}
	return (&unstructured.Unstructured{Object: out}).DeepCopy(), nil
}

// mergeTrie adds the paths of src to dst.
func mergeTrie(dst, src map[string]any) {
	for k, v := range src {
		sub, _ := v.(map[string]any)
		d, ok := dst[k].(map[string]any)
		if !ok {
			d = map[string]any{}
			dst[k] = d
		}
		mergeTrie(d, sub)
	}
}

// children returns the entries of a trie node other than ".".
func children(trie map[string]any) int {
	n := len(trie)
	if _, ok := trie["."]; ok {
		n--
	}
	return n
}

// extract returns the part of v that trie names. A trie without children
// names v whole.
func extract(v any, trie map[string]any) (any, error) {
	if children(trie) == 0 {
		return v, nil
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range trie {
			if k == "." {
				continue
			}
			name, ok := strings.CutPrefix(k, "f:")
			if !ok {
				return nil, &fieldError{msg: fmt.Sprintf("%q in a map: want f:NAME", k)}
			}
			val, ok := x[name]
			if !ok {
				continue // owned, since removed by another manager
			}
			subTrie, _ := sub.(map[string]any)
			e, err := extract(val, subTrie)
			if err != nil {
				return nil, within("."+name, err)
			}
			out[name] = e
		}
		return out, nil
	case []any:
		return extractList(x, trie)
	}
	// A scalar where the trie expects children: the value changed shape;
	// it is owned whole.
	return v, nil
}

// extractList returns the items of list that trie names, in their order.
func extractList(list []any, trie map[string]any) (any, error) {
	type sel struct {
		keys  map[string]any // k: the key fields
		value any            // v: the value
		index int            // i: the index, or -1
		trie  map[string]any
		raw   string
	}
	var sels []sel
	for k, sub := range trie {
		if k == "." {
			continue
		}
		subTrie, _ := sub.(map[string]any)
		s := sel{index: -1, trie: subTrie, raw: k}
		switch {
		case strings.HasPrefix(k, "k:"):
			if err := decodeJSON(k[2:], &s.keys); err != nil || len(s.keys) == 0 {
				return nil, &fieldError{msg: fmt.Sprintf("%q: bad list item key", k)}
			}
		case strings.HasPrefix(k, "v:"):
			if err := decodeJSON(k[2:], &s.value); err != nil {
				return nil, &fieldError{msg: fmt.Sprintf("%q: bad set value", k)}
			}
		case strings.HasPrefix(k, "i:"):
			i, err := strconv.Atoi(k[2:])
			if err != nil || i < 0 {
				return nil, &fieldError{msg: fmt.Sprintf("%q: bad list index", k)}
			}
			s.index = i
		default:
			return nil, &fieldError{msg: fmt.Sprintf("%q in a list: want k:, v: or i:", k)}
		}
		sels = append(sels, s)
	}
	out := []any{}
	for i, item := range list {
		for _, s := range sels {
			var match bool
			switch {
			case s.keys != nil:
				m, ok := item.(map[string]any)
				match = ok && keysMatch(m, s.keys)
			case s.index >= 0:
				match = s.index == i
			default:
				match = jsonEqual(item, s.value)
			}
			if !match {
				continue
			}
			e, err := extract(item, s.trie)
			if err != nil {
				return nil, within("["+s.raw+"]", err)
			}
			if m, ok := e.(map[string]any); ok && s.keys != nil {
				// The key fields identify the item when it is applied.
				m = maps.Clone(m)
				for k := range s.keys {
					m[k] = item.(map[string]any)[k]
				}
				e = m
			}
			out = append(out, e)
			break
		}
	}
	return out, nil
}

// keysMatch reports whether item has the key fields' values.
func keysMatch(item, keys map[string]any) bool {
	for k, want := range keys {
		got, ok := item[k]
		if !ok || !jsonEqual(got, want) {
			return false
		}
	}
	return true
}

// jsonEqual compares two values by their JSON form, so that a number
// decoded from a key (json.Number) equals the int64 or float64 of an object.
func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

func decodeJSON(s string, v any) error {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	return d.Decode(v)
}

// fieldError is a malformed fieldsV1 entry at a path of the object.
type fieldError struct{ path, msg string }

func (e *fieldError) Error() string {
	if e.path == "" {
		return e.msg
	}
	return e.path + ": " + e.msg
}

// within puts prefix in front of the path of err.
func within(prefix string, err error) error {
	if fe, ok := err.(*fieldError); ok {
		return &fieldError{path: prefix + fe.path, msg: fe.msg}
	}
	return err
}
