package secret

import (
	"encoding/base64"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Values returns every clear value that the Secret u holds, so that callers
// can mask them in logs (GitHub's ::add-mask::) and tests can search outputs
// for them: each data value in its base64 form and decoded, each stringData
// value as it is and base64-encoded, and the kubectl last-applied
// annotation. It returns nil when u is not a Secret. Empty values and digest
// markers are left out; the result is sorted and holds no duplicates.
// Multi-line values are returned whole: a caller that masks line by line
// must split them.
func Values(u *unstructured.Unstructured) []string {
	if !IsSecret(u) {
		return nil
	}
	var out []string
	add := func(s string) {
		if s != "" && !IsRedacted(s) {
			out = append(out, s)
		}
	}
	if data, ok := u.Object["data"].(map[string]any); ok {
		for _, v := range data {
			s, ok := v.(string)
			if !ok {
				continue
			}
			add(s)
			if b, err := base64.StdEncoding.DecodeString(s); err == nil {
				add(string(b))
			}
		}
	}
	if data, ok := u.Object["stringData"].(map[string]any); ok {
		for _, v := range data {
			s, ok := v.(string)
			if !ok {
				continue
			}
			add(s)
			add(base64.StdEncoding.EncodeToString([]byte(s)))
		}
	}
	if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "annotations", LastAppliedAnnotation); ok {
		if s, ok := v.(string); ok {
			add(s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
