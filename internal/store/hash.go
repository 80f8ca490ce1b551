package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/secret"
)

// ID names an object in the store: the Merkle SHA-256 of its normalised
// tree (see Hash).
type ID [32]byte

// String returns the ID in lower-case hex.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// MarshalText encodes the ID as hex, so that IDs read well in JSON.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText parses a hex ID.
func (id *ID) UnmarshalText(b []byte) error {
	p, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = p
	return nil
}

// ParseID parses the 64 hex characters of an ID.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 2*len(id) {
		return ID{}, fmt.Errorf("object ID %q: want %d hex characters", s, 2*len(id))
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return ID{}, fmt.Errorf("object ID %q: %w", s, err)
	}
	return id, nil
}

// The type tags that start the input of every node's hash. They keep the
// hashes of distinct types apart: "1" (string), 1 (number), true and null
// never collide, and neither do a list and a map.
const (
	tagNull        = 'z'
	tagBool        = 'b'
	tagString      = 's'
	tagNumber      = 'n'
	tagList        = 'l'
	tagMap         = 'm'
	tagUnsupported = 'x'
)

// Hash returns the Merkle SHA-256 of a JSON-like tree:
//
//   - null: SHA-256("z"); a boolean: SHA-256("b" + "0" or "1");
//   - a string: SHA-256("s" + its bytes);
//   - a number: SHA-256("n" + its canonical decimal form, below);
//   - a list: SHA-256("l" + the hashes of its items, in order);
//   - a map: SHA-256("m" + for each key in byte order, the hash of the key
//     as a string and the hash of its value).
//
// The same content gives the same ID whatever the order of the keys of the
// input, and the hash of any subtree is the hash that subtree has on its
// own, so subtrees can be compared without re-reading the object.
//
// Numbers are canonicalised so that a value hashes the same however it was
// decoded: an integral value (any Go integer type; a float64 or json.Number
// with no fractional part, such as 3, 3.0 or 3e0) is written in decimal
// without exponent or fraction ("3"); any other finite value in Go's
// shortest round-trip form, strconv.FormatFloat(f, 'g', -1, 64) ("0.5",
// "1e-07"); NaN and infinities as "NaN", "+Inf", "-Inf". So int64(3),
// float64(3) and json.Number("3.0") give the same hash, which is what makes
// an object decoded by apimachinery (int64) and by encoding/json (float64)
// hash alike.
//
// v is meant to be what unstructured objects and encoding/json produce:
// map[string]any, []any, string, bool, nil, int64, float64 and
// json.Number. Other integer and float types, maps with string keys, slices
// and pointers are hashed as encoding/json would encode them ([]byte as a
// base64 string, a nil map, slice or pointer as null); anything else goes
// through encoding/json, and what encoding/json cannot encode hashes as an
// "unsupported" marker of its Go type. v must be a tree: a map or list that
// contains itself never returns.
func Hash(v any) ID {
	return hashValue(v)
}

// ObjectID returns the ID under which the store keeps u: the Hash of
// Normalize(r, u). r must not be nil (use DB.Redactor); a nil u hashes as
// null.
func ObjectID(r *secret.Redactor, u *unstructured.Unstructured) ID {
	n, _ := Normalize(r, u)
	if n == nil {
		return nullID
	}
	return Hash(n.Object)
}

func leaf(tag byte, s string) ID {
	var buf [128]byte
	b := buf[:0]
	if len(s)+1 > len(buf) {
		b = make([]byte, 0, 1+len(s))
	}
	b = append(b, tag)
	b = append(b, s...)
	return sha256.Sum256(b)
}

// keyHashes caches the hashes of map keys: the objects of a cluster share
// most of their keys ("apiVersion", "f:metadata", ...).
var keyHashes struct {
	sync.RWMutex
	m map[string]ID
}

const (
	maxCachedKeys   = 1 << 14
	maxCachedKeyLen = 96
)

func keyHash(k string) ID {
	if len(k) > maxCachedKeyLen {
		return leaf(tagString, k)
	}
	keyHashes.RLock()
	h, ok := keyHashes.m[k]
	keyHashes.RUnlock()
	if ok {
		return h
	}
	h = leaf(tagString, k)
	keyHashes.Lock()
	if keyHashes.m == nil || len(keyHashes.m) >= maxCachedKeys {
		keyHashes.m = make(map[string]ID)
	}
	keyHashes.m[k] = h
	keyHashes.Unlock()
	return h
}

var (
	nullID  = leaf(tagNull, "")
	trueID  = leaf(tagBool, "1")
	falseID = leaf(tagBool, "0")
)

func hashValue(v any) ID {
	switch x := v.(type) {
	case nil:
		return nullID
	case bool:
		if x {
			return trueID
		}
		return falseID
	case string:
		return leaf(tagString, x)
	case int64:
		return leaf(tagNumber, strconv.FormatInt(x, 10))
	case float64:
		return leaf(tagNumber, canonFloat(x))
	case json.Number:
		return hashNumber(x)
	case int:
		return leaf(tagNumber, strconv.FormatInt(int64(x), 10))
	case int32:
		return leaf(tagNumber, strconv.FormatInt(int64(x), 10))
	case map[string]any:
		if x == nil {
			return nullID
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b := make([]byte, 1, 1+64*len(keys))
		b[0] = tagMap
		for _, k := range keys {
			kh, vh := keyHash(k), hashValue(x[k])
			b = append(b, kh[:]...)
			b = append(b, vh[:]...)
		}
		return sha256.Sum256(b)
	case []any:
		if x == nil {
			return nullID
		}
		b := make([]byte, 1, 1+32*len(x))
		b[0] = tagList
		for _, item := range x {
			h := hashValue(item)
			b = append(b, h[:]...)
		}
		return sha256.Sum256(b)
	}
	return hashReflect(reflect.ValueOf(v))
}

// hashReflect hashes the values that are not the usual JSON-like types the
// way encoding/json would encode them.
func hashReflect(rv reflect.Value) ID {
	switch rv.Kind() {
	case reflect.Invalid:
		return nullID
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nullID
		}
		return hashValue(rv.Elem().Interface())
	case reflect.Bool:
		return hashValue(rv.Bool())
	case reflect.String:
		return leaf(tagString, rv.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return leaf(tagNumber, strconv.FormatInt(rv.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return leaf(tagNumber, strconv.FormatUint(rv.Uint(), 10))
	case reflect.Float32:
		// encoding/json writes a float32 with 32-bit precision.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(rv.Float(), 'g', -1, 32), 64)
		return leaf(tagNumber, canonFloat(f))
	case reflect.Float64:
		return leaf(tagNumber, canonFloat(rv.Float()))
	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String {
			if rv.IsNil() {
				return nullID
			}
			m := make(map[string]any, rv.Len())
			for it := rv.MapRange(); it.Next(); {
				m[it.Key().String()] = it.Value().Interface()
			}
			return hashValue(m)
		}
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return nullID
		}
		if rv.Type().Elem().Kind() == reflect.Uint8 && rv.Kind() == reflect.Slice {
			return leaf(tagString, base64.StdEncoding.EncodeToString(rv.Bytes()))
		}
		l := make([]any, rv.Len())
		for i := range l {
			l[i] = rv.Index(i).Interface()
		}
		return hashValue(l)
	}
	// Structs, maps with other keys and the like: hash what encoding/json
	// makes of them.
	b, err := json.Marshal(rv.Interface())
	if err != nil {
		return leaf(tagUnsupported, rv.Type().String())
	}
	var tree any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&tree); err != nil {
		return leaf(tagUnsupported, rv.Type().String())
	}
	return hashValue(tree)
}

// hashNumber hashes a json.Number by its canonical value. A string that is
// not a number cannot come from a JSON decoder; it hashes as unsupported.
func hashNumber(n json.Number) ID {
	s := string(n)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return leaf(tagNumber, strconv.FormatInt(i, 10))
	}
	if i, ok := new(big.Int).SetString(s, 10); ok {
		return leaf(tagNumber, i.String())
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return leaf(tagUnsupported, "json.Number:"+s)
	}
	return leaf(tagNumber, canonFloat(f))
}

// canonFloat returns the canonical decimal form of f (see Hash).
func canonFloat(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return strconv.FormatFloat(f, 'g', -1, 64)
	case f == math.Trunc(f):
		if f >= -(1<<63) && f < 1<<63 {
			return strconv.FormatInt(int64(f), 10)
		}
		i, _ := big.NewFloat(f).Int(nil)
		return i.String()
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
