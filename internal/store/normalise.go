package store

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/secret"
)

// Normalize returns the form of u that the store hashes and keeps, and u's
// resourceVersion, which the store keeps in the snapshot entry instead:
//
//   - a deep copy, so u is never changed;
//   - metadata.resourceVersion dropped (returned separately), so that an
//     object that did not change keeps its ID;
//   - managedFields and status kept, so that a snapshot answers "who owned
//     what" and "what was running";
//   - a Secret's values redacted by r (see secret.Redactor.Redact);
//   - values brought to the types encoding/json decodes them to (int64,
//     float64, string, bool, nil, map[string]any, []any), with strings made
//     valid UTF-8 the way encoding/json writes them, so that the object the
//     store gives back hashes to the same ID.
//
// r must not be nil: use the store's, DB.Redactor. Normalize(r, nil)
// returns nil and "".
func Normalize(r *secret.Redactor, u *unstructured.Unstructured) (normalised *unstructured.Unstructured, resourceVersion string) {
	if r == nil {
		panic("store: Normalize: nil Redactor")
	}
	if u == nil {
		return nil, ""
	}
	obj, _ := canonical(u.Object).(map[string]any)
	if obj == nil {
		obj = map[string]any{}
	}
	n := &unstructured.Unstructured{Object: obj}
	if md, ok := obj["metadata"].(map[string]any); ok {
		if rv, ok := md["resourceVersion"].(string); ok {
			resourceVersion = rv
		}
		delete(md, "resourceVersion")
	}
	return r.Redact(n), resourceVersion
}

// canonical deep-copies v into the types encoding/json decodes to.
func canonical(v any) any {
	switch x := v.(type) {
	case nil, bool, int64:
		return x
	case float64:
		return x
	case string:
		return validUTF8(x)
	case map[string]any:
		if x == nil {
			return nil
		}
		m := make(map[string]any, len(x))
		valid := true
		for k, v := range x {
			if !utf8.ValidString(k) {
				valid = false
				break
			}
			m[k] = canonical(v)
		}
		if valid {
			return m
		}
		// Keys that become equal once made valid UTF-8 resolve the same
		// way every time: in sorted order, the last wins.
		clear(m)
		for _, k := range slices.Sorted(maps.Keys(x)) {
			m[validUTF8(k)] = canonical(x[k])
		}
		return m
	case []any:
		if x == nil {
			return nil
		}
		l := make([]any, len(x))
		for i, item := range x {
			l[i] = canonical(item)
		}
		return l
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return f
		}
		return string(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := rv.Uint(); u <= math.MaxInt64 {
			return int64(u)
		}
		return float64(rv.Uint())
	case reflect.Float32:
		f, _ := strconv.ParseFloat(strconv.FormatFloat(rv.Float(), 'g', -1, 32), 64)
		return f
	case reflect.Float64:
		return rv.Float()
	case reflect.String:
		return validUTF8(rv.String())
	case reflect.Bool:
		return rv.Bool()
	}
	// Anything else: what encoding/json makes of it.
	b, err := json.Marshal(v)
	if err != nil {
		return v // PutSnapshot reports the error when it encodes the object.
	}
	var tree any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&tree); err != nil {
		return v
	}
	return canonical(tree)
}

// validUTF8 replaces every byte of s that is not part of valid UTF-8 by
// U+FFFD, as encoding/json does when it writes s.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b []byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}
