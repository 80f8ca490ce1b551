package store

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/secret"
)

// decodeNumber decodes JSON as encoding/json does with UseNumber.
func decodeNumber(t testing.TB, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// decodeFloat decodes JSON as encoding/json does by default.
func decodeFloat(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// decodeUnstructured decodes JSON as apimachinery does (int64, float64).
func decodeUnstructured(t testing.TB, s string) any {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(`{"kind":"K","apiVersion":"v1","v":` + s + `}`)); err != nil {
		t.Fatal(err)
	}
	return u.Object["v"]
}

func TestHashSame(t *testing.T) {
	tests := []struct {
		name string
		a, b any
	}{
		{"key order", decodeFloat(t, `{"a":1,"b":{"c":[1,2],"d":"x"}}`), decodeFloat(t, `{"b":{"d":"x","c":[1,2]},"a":1}`)},
		{"int64 and float64", int64(3), float64(3)},
		{"int and int64", 3, int64(3)},
		{"json.Number integer forms", json.Number("3"), json.Number("3.0")},
		{"json.Number exponent", json.Number("1e2"), int64(100)},
		{"json.Number fraction", json.Number("0.5"), 0.5},
		{"negative zero", math.Copysign(0, -1), int64(0)},
		{"large integral float", 1e21, json.Number("1000000000000000000000")},
		{"uint64 beyond int64", uint64(math.MaxUint64), json.Number("18446744073709551615")},
		{"float32", float32(0.1), 0.1},
		{"decoders agree", decodeUnstructured(t, `{"replicas":3,"ratio":0.25,"l":[1,"a",null,true]}`), decodeFloat(t, `{"replicas":3.0,"ratio":0.25,"l":[1,"a",null,true]}`)},
		{"typed maps and slices", map[string]string{"a": "b"}, map[string]any{"a": "b"}},
		{"string slice", []string{"a", "b"}, []any{"a", "b"}},
		{"nil map is null", map[string]any(nil), nil},
		{"nil slice is null", []any(nil), nil},
		{"bytes as base64", []byte("hi"), "aGk="},
		{"struct as JSON", struct {
			A int `json:"a"`
		}{1}, map[string]any{"a": int64(1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if a, b := Hash(tt.a), Hash(tt.b); a != b {
				t.Errorf("Hash(%#v) = %s, Hash(%#v) = %s, want equal", tt.a, a, tt.b, b)
			}
		})
	}
}

func TestHashDistinct(t *testing.T) {
	values := map[string]any{
		`string "1"`:         "1",
		"number 1":           int64(1),
		"true":               true,
		"false":              false,
		"null":               nil,
		`string "true"`:      "true",
		`string "null"`:      "null",
		"empty string":       "",
		"empty list":         []any{},
		"empty map":          map[string]any{},
		`{"a":["b"]}`:        map[string]any{"a": []any{"b"}},
		`{"a":"b"}`:          map[string]any{"a": "b"},
		`["a","b"]`:          []any{"a", "b"},
		`["b","a"]`:          []any{"b", "a"},
		`["ab"]`:             []any{"ab"},
		`{"ab":""}`:          map[string]any{"ab": ""},
		`{"a":"b","c":"d"}`:  map[string]any{"a": "b", "c": "d"},
		`{"a":"bc","":"d"}`:  map[string]any{"a": "bc", "": "d"},
		"number 1.5":         1.5,
		"number 15":          int64(15),
		"number -1":          int64(-1),
		"NaN":                math.NaN(),
		"+Inf":               math.Inf(1),
		`[[]]`:               []any{[]any{}},
		`[{}]`:               []any{map[string]any{}},
		`[null]`:             []any{nil},
		`{"a":null}`:         map[string]any{"a": nil},
		`{"a":{}}`:           map[string]any{"a": map[string]any{}},
		"unsupported chan":   make(chan int),
		"unsupported func":   func() {},
		`string "1e2"`:       "1e2",
		`json.Number "1e-7"`: json.Number("1e-7"),
	}
	seen := map[ID]string{}
	for name, v := range values {
		h := Hash(v)
		if other, ok := seen[h]; ok {
			t.Errorf("%s and %s hash alike: %s", name, other, h)
		}
		seen[h] = name
	}
}

func TestHashSubtree(t *testing.T) {
	// A subtree's hash is the hash it has on its own: comparing the
	// hashes of two objects' specs needs no more than Hash of each.
	a := decodeFloat(t, `{"spec":{"replicas":2,"x":[1,2]},"status":{"ready":1}}`).(map[string]any)
	b := decodeFloat(t, `{"status":{"ready":5},"spec":{"x":[1,2],"replicas":2}}`).(map[string]any)
	if Hash(a["spec"]) != Hash(b["spec"]) {
		t.Error("equal subtrees hash differently")
	}
	if Hash(a) == Hash(b) {
		t.Error("objects with different status hash alike")
	}
}

func TestParseID(t *testing.T) {
	id := Hash("x")
	got, err := ParseID(id.String())
	if err != nil {
		t.Fatal(err)
	}
	if got != id {
		t.Errorf("ParseID(%s) = %s", id, got)
	}
	for _, s := range []string{"", "abc", strings.Repeat("g", 64), id.String() + "00"} {
		if _, err := ParseID(s); err == nil {
			t.Errorf("ParseID(%q) succeeded, want an error", s)
		}
	}
	b, err := json.Marshal(map[string]ID{"id": id})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"` + id.String() + `"}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
	var back map[string]ID
	if err := json.Unmarshal(b, &back); err != nil || back["id"] != id {
		t.Errorf("JSON round trip = %v, %v", back, err)
	}
}

func TestObjectID(t *testing.T) {
	r := secret.NewRedactor([]byte("k"))
	parse := func(s string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(s)); err != nil {
			t.Fatal(err)
		}
		return u
	}
	a := parse(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n","resourceVersion":"1"},"data":{"a":"1","b":"2"}}`)
	b := parse(`{"data":{"b":"2","a":"1"},"metadata":{"resourceVersion":"99","namespace":"n","name":"c"},"kind":"ConfigMap","apiVersion":"v1"}`)
	c := parse(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"},"data":{"a":"1","b":"3"}}`)
	if ObjectID(r, a) != ObjectID(r, b) {
		t.Error("same object with another key order and resourceVersion has another ID")
	}
	if ObjectID(r, a) == ObjectID(r, c) {
		t.Error("objects with different data have the same ID")
	}

	s1 := parse(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"p":"aHVudGVyMg=="}}`)
	s2 := parse(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"p":"aHVudGVyMw=="}}`)
	if ObjectID(r, s1) == ObjectID(r, s2) {
		t.Error("Secrets with different values have the same ID")
	}
	n, _ := Normalize(r, s1)
	if ObjectID(r, s1) != Hash(n.Object) {
		t.Error("ObjectID is not the hash of the normalised object")
	}
	var buf bytes.Buffer
	json.NewEncoder(&buf).Encode(n.Object)
	if strings.Contains(buf.String(), "aHVudGVyMg==") {
		t.Errorf("normalised Secret holds its value: %s", buf.String())
	}
	if diff := cmp.Diff(n.Object["data"], map[string]any{"p": r.Digest([]byte("hunter2"))}); diff != "" {
		t.Errorf("normalised Secret data (-got +want):\n%s", diff)
	}
}
