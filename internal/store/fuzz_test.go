package store

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var update = flag.Bool("update", false, "rewrite the seed corpus in testdata/fuzz")

// hashSeen maps every ID FuzzHash computed to the canonical form of its
// input, across inputs, to catch two different values hashing alike.
var hashSeen = struct {
	sync.Mutex
	forms map[ID]string
}{forms: map[ID]string{}}

func FuzzHash(f *testing.F) {
	for _, s := range hashSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var num any
		if d.Decode(&num) != nil || d.More() {
			return
		}
		var flt any
		if json.Unmarshal([]byte(s), &flt) != nil {
			return // a number out of float64 range
		}
		// The same document with its keys in another order hashes the
		// same, decoded either way.
		shuffled := encodeShuffled(num, rand.New(rand.NewPCG(uint64(len(s)), 7)))
		d = json.NewDecoder(strings.NewReader(shuffled))
		d.UseNumber()
		var num2, flt2 any
		if err := d.Decode(&num2); err != nil {
			t.Fatalf("re-encoded %q as %q: %v", s, shuffled, err)
		}
		if err := json.Unmarshal([]byte(shuffled), &flt2); err != nil {
			t.Fatal(err)
		}
		if Hash(num) != Hash(num2) {
			t.Errorf("%q and %q (keys reordered) hash differently", s, shuffled)
		}
		if Hash(flt) != Hash(flt2) {
			t.Errorf("%q and %q (keys reordered) hash differently as float64", s, shuffled)
		}
		// Different values never hash alike.
		form := canonicalForm(t, flt)
		id := Hash(flt)
		hashSeen.Lock()
		defer hashSeen.Unlock()
		if prev, ok := hashSeen.forms[id]; ok && prev != form {
			t.Errorf("%s and %s both hash to %s", prev, form, id)
		}
		hashSeen.forms[id] = form
	})
}

// encodeShuffled writes v as JSON with the keys of every map in random
// order.
func encodeShuffled(v any, rng *rand.Rand) string {
	var b strings.Builder
	var enc func(any)
	enc = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteByte(':')
				enc(x[k])
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, item := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				enc(item)
			}
			b.WriteByte(']')
		default:
			vb, _ := json.Marshal(x)
			b.Write(vb)
		}
	}
	enc(v)
	return b.String()
}

// canonicalForm returns a text that two float64 trees share exactly when
// they are the same value: sorted keys, and -0 written as 0.
func canonicalForm(t *testing.T, v any) string {
	var fix func(any) any
	fix = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			m := make(map[string]any, len(x))
			for k, v := range x {
				m[k] = fix(v)
			}
			return m
		case []any:
			l := make([]any, len(x))
			for i, v := range x {
				l[i] = fix(v)
			}
			return l
		case float64:
			if x == 0 {
				return math.Abs(x)
			}
		}
		return v
	}
	b, err := json.Marshal(fix(v))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var hashSeeds = []string{
	`"1"`, `1`, `true`, `null`, `1.0`, `-0`, `1e2`, `100`, `0.1`, `12345678901234567890`, `1e21`,
	`{"a":["b"]}`, `{"a":"b"}`, `["a","b"]`, `["b","a"]`, `[]`, `{}`, `[[]]`, `[{}]`, `{"":""}`,
	`{"b":1,"a":{"d":[1,2,{"f":null,"e":true}],"c":"x"}}`,
	`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"b"},"managedFields":[{"manager":"m","fieldsV1":{"f:data":{".":{}}}}]},"data":{"k":"v"}}`,
}

// FuzzOpen opens damaged and arbitrary files: Open and every read must
// return an error, never panic, hang or exhaust memory.
func FuzzOpen(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ro := range []bool{true, false} {
			path := filepath.Join(t.TempDir(), "snapply.db")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			check := func(err error) {
				if err != nil && (strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "store: "+path+": ")) {
					t.Errorf("error %q: want one line starting with the file", err)
				}
			}
			db, err := Open(path, Options{ReadOnly: ro, Timeout: time.Second})
			check(err)
			if err != nil {
				continue
			}
			metas, err := db.Snapshots()
			check(err)
			for _, id := range append([]string{Latest, "2"}, idsOf(metas)...) {
				s, err := db.Snapshot(id)
				check(err)
				if err != nil {
					continue
				}
				for i, e := range s.Entries {
					if i == 20 {
						break
					}
					_, err := db.Object(e.ID)
					check(err)
				}
			}
			if !ro {
				_, err := db.PutSnapshot(t.Context(), Meta{Kind: Before}, []*unstructured.Unstructured{seedObject("fuzz")})
				check(err)
			}
			check(db.Close())
		}
	})
}

func idsOf(metas []Meta) []string {
	var ids []string
	for _, m := range metas {
		ids = append(ids, m.ID)
	}
	return ids
}

func seedObject(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default", "resourceVersion": "1"},
		"data":     map[string]any{"k": "v"},
	}}
}

// TestFuzzSeeds keeps the seed corpus of FuzzOpen and FuzzHash in
// testdata/fuzz meaningful: the stores in it open and hold snapshots, so
// that the fuzzer starts from valid files. With -update it writes the
// corpus anew (after a change of the file format).
func TestFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz")
	if *update {
		writeSeeds(t, dir)
	}
	for name, wantSnapshots := range map[string]int{"store-empty": 0, "store-snapshots": 2} {
		b, err := os.ReadFile(filepath.Join(dir, "FuzzOpen", name))
		if err != nil {
			t.Fatalf("%v (run go test -run TestFuzzSeeds -update)", err)
		}
		data, err := parseCorpus(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		path := filepath.Join(t.TempDir(), "snapply.db")
		os.WriteFile(path, data, 0o600)
		db, err := Open(path, Options{ReadOnly: true, Timeout: time.Second})
		if err != nil {
			t.Fatalf("seed %s no longer opens (run go test -run TestFuzzSeeds -update): %v", name, err)
		}
		metas, err := db.Snapshots()
		db.Close()
		if err != nil || len(metas) != wantSnapshots {
			t.Errorf("seed %s holds %d snapshots (%v), want %d", name, len(metas), err, wantSnapshots)
		}
	}
}

func writeSeeds(t *testing.T, dir string) {
	opts := Options{Timeout: time.Second, ToolVersion: "seed", pageSize: 1024}
	build := func(snapshots int) []byte {
		path := filepath.Join(t.TempDir(), "snapply.db")
		db, err := Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		objs := []*unstructured.Unstructured{seedObject("a"), seedObject("b"), {Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "default"},
			"data": map[string]any{"k": "c2VlZA=="},
		}}}
		for i := range snapshots {
			objs[0].Object["data"] = map[string]any{"k": fmt.Sprint(i)}
			if _, err := db.PutSnapshot(t.Context(), Meta{Kind: Before}, objs); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	full := build(2)
	seeds := map[string][]byte{
		"store-empty":     build(0),
		"store-snapshots": full,
		"truncated":       full[:2048],
		"text":            []byte("apiVersion: v1\nkind: ConfigMap\n"),
		"empty":           {},
	}
	write := func(fuzz, name, value string) {
		p := filepath.Join(dir, fuzz, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("go test fuzz v1\n"+value+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range seeds {
		write("FuzzOpen", name, "[]byte("+strconv.Quote(string(b))+")")
	}
	for i, s := range hashSeeds[len(hashSeeds)-2:] {
		write("FuzzHash", fmt.Sprintf("object-%d", i), "string("+strconv.Quote(s)+")")
	}
}

// parseCorpus reads the []byte of a one-value corpus file.
func parseCorpus(b []byte) ([]byte, error) {
	_, rest, ok := bytes.Cut(b, []byte("\n"))
	rest = bytes.TrimSpace(rest)
	if !ok || !bytes.HasPrefix(rest, []byte("[]byte(")) || !bytes.HasSuffix(rest, []byte(")")) {
		return nil, fmt.Errorf("not a []byte corpus file")
	}
	s, err := strconv.Unquote(string(rest[len("[]byte(") : len(rest)-1]))
	return []byte(s), err
}
