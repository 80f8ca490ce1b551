package drift

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/plan"
)

// adoptPatch returns the patch that adopts the live values of paths in
// git: a strategic-merge patch in YAML, headed by the object's apiVersion,
// kind, name and namespace, holding each drifted field with its live
// value. A field the live object does not set is null (remove it from
// git), and a list item it does not have is "$patch: delete". live is
// already redacted: a Secret's values stay redacted.
func adoptPatch(live *unstructured.Unstructured, paths []fieldpath.Path) string {
	if len(paths) == 0 {
		return ""
	}
	meta := map[string]any{"name": live.GetName()}
	if ns := live.GetNamespace(); ns != "" {
		meta["namespace"] = ns
	}
	root := map[string]any{"apiVersion": live.GetAPIVersion(), "kind": live.GetKind(), "metadata": meta}
	for _, p := range paths {
		adoptAt(root, live.Object, p)
	}
	out, err := yaml.Marshal(root)
	if err != nil {
		return ""
	}
	return string(out)
}

// adoptAt puts the live value at p into node, the patch's counterpart of
// the live map cur.
func adoptAt(node map[string]any, cur map[string]any, p fieldpath.Path) {
	if len(p) == 0 || p[0].FieldName == nil {
		return
	}
	name := *p[0].FieldName
	lv, ok := cur[name]
	switch {
	case !ok:
		node[name] = nil
	case len(p) == 1:
		node[name] = lv
	case p[1].Key != nil:
		adoptItem(node, name, lv, p[1:])
	case p[1].FieldName != nil:
		lm, isMap := lv.(map[string]any)
		if !isMap {
			node[name] = lv
			return
		}
		child, isMap := node[name].(map[string]any)
		if _, set := node[name]; set && !isMap {
			return // already set whole
		}
		if child == nil {
			child = map[string]any{}
			node[name] = child
		}
		adoptAt(child, lm, p[1:])
	default: // a set or a positional list: the whole live list
		node[name] = lv
	}
}

// adoptItem puts the live list item that p[0] (a key) selects, or a
// "$patch: delete" item when live has none, into the list node[name].
func adoptItem(node map[string]any, name string, liveList any, p fieldpath.Path) {
	items, isList := node[name].([]any)
	if _, set := node[name]; set && !isList {
		return
	}
	keys := map[string]any{}
	for _, f := range *p[0].Key {
		keys[f.Name] = f.Value.Unstructured()
	}
	var item map[string]any
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && sameKeys(m, keys) {
			item = m
		}
	}
	if item == nil {
		item = map[string]any{}
		for k, v := range keys {
			item[k] = v
		}
		items = append(items, item)
		node[name] = items
	}
	lv, ok := plan.ValueAt(map[string]any{name: liveList}, fieldpath.Path{{FieldName: &name}, p[0]})
	lm, isMap := lv.(map[string]any)
	switch {
	case !ok || !isMap:
		for k := range item {
			if _, key := keys[k]; !key {
				delete(item, k)
			}
		}
		item["$patch"] = "delete"
	case len(p) == 1:
		for k, v := range lm {
			item[k] = v
		}
	default:
		if _, deleted := item["$patch"]; !deleted {
			adoptAt(item, lm, p[1:])
		}
	}
}

// sameKeys says whether item has the key fields keys.
func sameKeys(item, keys map[string]any) bool {
	for k, v := range keys {
		if yamlText(item[k]) != yamlText(v) {
			return false
		}
	}
	return true
}

func yamlText(v any) string {
	b, _ := yaml.Marshal(v)
	return string(b)
}
