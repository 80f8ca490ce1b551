package plan

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// FieldOp is what a change does to one field.
type FieldOp string

// The field operations. The strings are part of the JSON contract.
const (
	FieldAdd    FieldOp = "add"
	FieldRemove FieldOp = "remove"
	FieldChange FieldOp = "change"
)

// FieldDiff is one field that an update changes, with list items named by
// their keys rather than their position.
type FieldDiff struct {
	// Path names the field, like
	// "spec.template.spec.containers[name=web].image". A list item is
	// named by the keys the server merges it by ([name=web],
	// [containerPort=8080,protocol=TCP]), a set member by its value
	// ([=value]), and an item of a list without keys by its index ([2]).
	Path string `json:"path"`
	// Op is add, remove or change.
	Op FieldOp `json:"op"`
	// Before and After are the values, scalars as they are and maps and
	// lists as compact JSON; empty on the side where the field is absent.
	// Secret values are redacted digests.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// Schemas gives the server's types, so that list items are matched by the
// keys the server merges them by. A kube.Client is one.
type Schemas interface {
	// TypeConverter returns the converter of the objects of gv.
	TypeConverter(gv schema.GroupVersion) (managedfields.TypeConverter, error)
}

// FieldDiffs compares the stripped before and after objects field by
// field. Types are taken from schemas (nil, or a type it does not know,
// falls back to a schema deduced from the objects, where lists are compared
// whole). The result is sorted by path.
func FieldDiffs(schemas Schemas, before, after *unstructured.Unstructured) []FieldDiff {
	if before == nil || after == nil {
		return nil
	}
	b, a := Strip(before), Strip(after)
	cmp := compareTyped(schemas, b, a)
	if cmp == nil {
		return nil
	}
	var out []FieldDiff
	add := func(op FieldOp, set *fieldpath.Set, top bool) {
		set.Iterate(func(p fieldpath.Path) {
			// An added or removed subtree is one entry, at its root.
			if top && len(p) > 1 && set.Has(p[:len(p)-1]) {
				return
			}
			d := FieldDiff{Path: FieldPath(p), Op: op}
			if op != FieldAdd {
				v, _ := ValueAt(b.Object, p)
				d.Before = valueText(v)
			}
			if op != FieldRemove {
				v, _ := ValueAt(a.Object, p)
				d.After = valueText(v)
			}
			out = append(out, d)
		})
	}
	add(FieldChange, cmp.Modified, false)
	add(FieldAdd, cmp.Added, true)
	add(FieldRemove, cmp.Removed, true)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// compareTyped compares b and a with the server's type of their kind, or
// with a deduced type when that fails.
func compareTyped(schemas Schemas, b, a *unstructured.Unstructured) *typed.Comparison {
	if schemas != nil && b.GetAPIVersion() == a.GetAPIVersion() {
		if tc, err := schemas.TypeConverter(a.GroupVersionKind().GroupVersion()); err == nil {
			tb, errB := tc.ObjectToTyped(b, typed.AllowDuplicates)
			ta, errA := tc.ObjectToTyped(a, typed.AllowDuplicates)
			if errA == nil && errB == nil {
				if c, err := tb.Compare(ta); err == nil {
					return c
				}
			}
		}
	}
	tb, errB := typed.DeducedParseableType.FromUnstructured(b.Object)
	ta, errA := typed.DeducedParseableType.FromUnstructured(a.Object)
	if errA != nil || errB != nil {
		return nil
	}
	c, err := tb.Compare(ta)
	if err != nil {
		return nil
	}
	return c
}

// FieldPath prints p without its leading dot, list items by their keys
// ("spec.template.spec.containers[name=web].image"), keys unquoted unless
// they hold characters that would make the path ambiguous.
func FieldPath(p fieldpath.Path) string {
	var b strings.Builder
	for i, pe := range p {
		switch {
		case pe.FieldName != nil:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(*pe.FieldName)
		case pe.Key != nil:
			parts := make([]string, len(*pe.Key))
			for j, f := range *pe.Key {
				parts[j] = f.Name + "=" + keyText(f.Value)
			}
			b.WriteString("[" + strings.Join(parts, ",") + "]")
		case pe.Value != nil:
			b.WriteString("[=" + keyText(*pe.Value) + "]")
		case pe.Index != nil:
			fmt.Fprintf(&b, "[%d]", *pe.Index)
		}
	}
	return b.String()
}

// keyText prints a key value, quoted when it is empty or holds a
// character of the path syntax.
func keyText(v value.Value) string {
	s := value.ToString(v)
	if v.IsString() {
		s = v.AsString()
		if s == "" || strings.ContainsAny(s, "[]=,. \"") {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}

// ValueAt returns the value at p in obj, and whether it is there: list
// items are found by their key fields or value, as the path names them.
func ValueAt(obj any, p fieldpath.Path) (any, bool) {
	cur := obj
	for _, pe := range p {
		var ok bool
		switch {
		case pe.FieldName != nil:
			var m map[string]any
			if m, ok = cur.(map[string]any); ok {
				cur, ok = m[*pe.FieldName]
			}
		case pe.Index != nil:
			var l []any
			if l, ok = cur.([]any); ok && *pe.Index >= 0 && *pe.Index < len(l) {
				cur = l[*pe.Index]
			} else {
				ok = false
			}
		case pe.Key != nil:
			cur, ok = findItem(cur, func(item any) bool {
				m, isMap := item.(map[string]any)
				if !isMap {
					return false
				}
				for _, f := range *pe.Key {
					v, has := m[f.Name]
					if !has || !value.Equals(value.NewValueInterface(v), f.Value) {
						return false
					}
				}
				return true
			})
		case pe.Value != nil:
			cur, ok = findItem(cur, func(item any) bool {
				return value.Equals(value.NewValueInterface(item), *pe.Value)
			})
		}
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// findItem returns the first item of list that matches.
func findItem(list any, match func(any) bool) (any, bool) {
	l, _ := list.([]any)
	for _, item := range l {
		if match(item) {
			return item, true
		}
	}
	return nil, false
}

// valueText prints a field value: scalars as they are, maps and lists as
// compact JSON with sorted keys.
func valueText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case map[string]any, []any:
		out, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(out)
	}
	return fmt.Sprint(v)
}
