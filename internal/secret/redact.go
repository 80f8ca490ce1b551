package secret

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// digestLen is the number of hex characters of the HMAC that a digest shows.
const digestLen = 12

// marker matches a digest written by Redact.
var marker = regexp.MustCompile(`^<redacted sha256:[0-9a-f]{12}>$`)

// Redactor replaces Secret values by keyed digests.
//
// The key makes a digest useless for finding a value by trying candidates
// unless one holds the key: the store keeps its own random key, so digests
// of one store cannot be compared with another's.
type Redactor struct {
	key []byte
}

// NewRedactor returns a Redactor that digests with HMAC-SHA256 under key.
// It keeps a copy of key.
func NewRedactor(key []byte) *Redactor {
	return &Redactor{key: append([]byte(nil), key...)}
}

// Digest returns the marker that Redact puts in place of the clear value v:
// "<redacted sha256:XXXXXXXXXXXX>", the first 12 hex characters of
// HMAC-SHA256(key, v).
func (r *Redactor) Digest(v []byte) string {
	m := hmac.New(sha256.New, r.key)
	m.Write(v)
	return "<redacted sha256:" + hex.EncodeToString(m.Sum(nil))[:digestLen] + ">"
}

// IsRedacted reports whether s is a digest marker as Digest returns it.
func IsRedacted(s string) bool { return marker.MatchString(s) }

// Redact returns a deep copy of u in which, when u is a Secret, every value
// of data and stringData, and the kubectl last-applied annotation, is
// replaced by its Digest. A data value is base64-decoded first, so that
// data and stringData holding the same clear value give the same digest; a
// data value that is not valid base64 is digested as it is. A value that is
// already a digest marker is kept, so that redacting twice changes nothing.
//
// Objects that are not Secrets are returned as they are, not copied: the
// caller must not assume that the result can be changed without changing u.
// u must hold JSON-compatible values, as unstructured objects do.
func (r *Redactor) Redact(u *unstructured.Unstructured) *unstructured.Unstructured {
	if !IsSecret(u) {
		return u
	}
	c := u.DeepCopy()
	if v, ok := c.Object["data"]; ok && v != nil {
		c.Object["data"] = r.redactMap(v, true)
	}
	if v, ok := c.Object["stringData"]; ok && v != nil {
		c.Object["stringData"] = r.redactMap(v, false)
	}
	if md, ok := c.Object["metadata"].(map[string]any); ok {
		if ann, ok := md["annotations"].(map[string]any); ok {
			if v, ok := ann[LastAppliedAnnotation]; ok && v != nil {
				ann[LastAppliedAnnotation] = r.redactValue(v, false)
			}
		}
	}
	return c
}

// redactMap digests every value of m. A data or stringData field that is
// not a map is malformed; it is digested whole rather than kept.
func (r *Redactor) redactMap(v any, b64 bool) any {
	m, ok := v.(map[string]any)
	if !ok {
		return r.redactValue(v, false)
	}
	for k, x := range m {
		if x != nil {
			m[k] = r.redactValue(x, b64)
		}
	}
	return m
}

// redactValue digests one value. Values that are not strings (malformed
// Secrets) are digested in their JSON form.
func (r *Redactor) redactValue(v any, b64 bool) string {
	s, ok := v.(string)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(fmt.Sprintf("%#v", v))
		}
		return r.Digest(b)
	}
	if IsRedacted(s) {
		return s
	}
	if b64 {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			return r.Digest(b)
		}
	}
	return r.Digest([]byte(s))
}
