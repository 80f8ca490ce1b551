package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/kube"
)

// Verification says how the action of a change was found. The strings are
// part of the JSON contract.
type Verification string

// The verifications.
const (
	// VerifiedDryRun: the API server answered a server-side-apply dry run.
	VerifiedDryRun Verification = "dry-run"
	// VerifiedRecord: the object is known (see Input.Known): the record of
	// the last apply, and the object's managedFields, prove that applying
	// it is a no-op, and no request was sent for it.
	VerifiedRecord Verification = "record"
)

// AppliedFields returns a digest of snapply's managedFields entries on u:
// those of field manager snapply with operation Apply, each with its API
// version, subresource and fieldsV1 exactly, and without its time. It is ""
// when u has none.
//
// Another manager that writes a field snapply owns takes it from snapply
// (an update), or must force it (an apply), and either way snapply's entry
// changes; a write to fields snapply does not own (status, another
// manager's fields) leaves it as it is. The digest is what records keep of
// an apply, and what the known test compares.
func AppliedFields(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	raw, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields")
	list, _ := raw.([]any)
	var entries []map[string]any
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok || m["manager"] != kube.FieldManager || m["operation"] != "Apply" {
			continue
		}
		entry := make(map[string]any, len(m))
		for k, v := range m {
			if k != "time" {
				entry[k] = v
			}
		}
		entries = append(entries, entry)
	}
	if len(entries) == 0 {
		return ""
	}
	// encoding/json sorts map keys: the same entries give the same bytes.
	keys := make([]string, len(entries))
	for i, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return ""
		}
		keys[i] = string(b)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Verification counts the changes checked by a dry run and those known
// unchanged from the record.
func (p *Plan) Verification() (dryRuns, known int) {
	for _, c := range p.Changes {
		switch c.Verified {
		case VerifiedDryRun:
			dryRuns++
		case VerifiedRecord:
			known++
		}
	}
	return dryRuns, known
}
