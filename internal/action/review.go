package action

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/secret"
	"github.com/snapply/snapply/internal/store"
)

// Review is what a plan comment records of the plan it shows, so that the
// apply on merge can tell whether it applies the reviewed plan: a digest of
// every object's action and desired content, in plan order, and the
// changed objects, each with a short ID of its desired content.
type Review struct {
	// Digest is "sha256:" and the hex SHA-256 of the lines "ref action id"
	// of every change, in plan order.
	Digest string
	// Changes are the changes other than unchanged, as "action ref id12";
	// nil when the list was too long to keep in the comment.
	Changes []string
}

// maxReviewChanges bounds the changes a plan comment lists in its marker;
// beyond it only the digest is kept.
const maxReviewChanges = 200

// ReviewOf returns the review of pl for the desired set it was planned
// from. Secret values are digested with key (HMAC-SHA256) when there is
// one, so a changed Secret value changes the digest; without a key they are
// left out of it (the comment is readable by everyone who can read the
// pull request), and only which keys a Secret has counts.
func ReviewOf(pl *plan.Plan, desired []object.Object, key []byte) Review {
	ids := make(map[object.Key]string, len(desired))
	for _, d := range desired {
		ids[d.Ref.Key()] = reviewID(d.Obj, key)
	}
	h := sha256.New()
	var changes []string
	for _, c := range pl.Changes {
		id := ids[c.Ref.Key()]
		if id == "" {
			id = "-" // a prune: no desired content
		}
		line := fmt.Sprintf("%s %s %s", c.Action, c.Ref.Key(), id)
		fmt.Fprintln(h, line)
		if c.Action != plan.Unchanged {
			changes = append(changes, fmt.Sprintf("%s %s %s", c.Action, c.Ref.Key(), shortID(id)))
		}
	}
	r := Review{Digest: "sha256:" + hex.EncodeToString(h.Sum(nil))}
	if len(changes) <= maxReviewChanges {
		r.Changes = changes
		if r.Changes == nil {
			r.Changes = []string{}
		}
	}
	return r
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// reviewID is the ID of a desired object as a review records it.
func reviewID(u *unstructured.Unstructured, key []byte) string {
	if u == nil {
		return ""
	}
	if secret.IsSecret(u) {
		if len(key) > 0 {
			k := sha256.Sum256(append([]byte("snapply reviewed plan\x00"), key...))
			u = secret.NewRedactor(k[:]).Redact(u)
		} else {
			u = u.DeepCopy()
			for _, f := range []string{"data", "stringData"} {
				if m, ok := u.Object[f].(map[string]any); ok {
					for k := range m {
						m[k] = ""
					}
				}
			}
			if a := u.GetAnnotations(); a[lastAppliedAnnotation] != "" {
				a[lastAppliedAnnotation] = ""
				u.SetAnnotations(a)
			}
		}
	}
	return store.Hash(u.Object).String()
}

const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// Marker returns the hidden HTML comment that carries r in a plan comment.
func (r Review) Marker() string {
	var b strings.Builder
	b.WriteString("<!-- snapply:plan digest=" + r.Digest)
	if r.Changes != nil {
		b.WriteString(" changes=" + strings.Join(encodeChanges(r.Changes), ","))
	}
	b.WriteString(" -->")
	return b.String()
}

// The changes of a marker: "action ref id" with the spaces as "~" and the
// characters that could end an HTML comment or a list percent-encoded.
var changeEscaper = strings.NewReplacer("%", "%25", " ", "~", ",", "%2C", "-", "%2D", ">", "%3E", "~", "%7E")
var changeUnescaper = strings.NewReplacer("%2C", ",", "%2D", "-", "%3E", ">", "%7E", "~", "%25", "%")

func encodeChanges(cs []string) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = changeEscaper.Replace(c)
	}
	return out
}

var reviewMarker = regexp.MustCompile(`<!-- snapply:plan digest=(sha256:[0-9a-f]{64})(?: changes=([^ ]*))? -->`)

// ParseReview finds the review marker in a comment body.
func ParseReview(body string) (Review, bool) {
	m := reviewMarker.FindStringSubmatch(body)
	if m == nil {
		return Review{}, false
	}
	r := Review{Digest: m[1]}
	if strings.Contains(m[0], " changes=") {
		r.Changes = []string{}
		if m[2] != "" {
			for _, c := range strings.Split(m[2], ",") {
				c = strings.ReplaceAll(c, "~", " ")
				r.Changes = append(r.Changes, changeUnescaper.Replace(c))
			}
		}
	}
	return r, true
}

// Differences lists, one line each, how the plan now differs from the
// reviewed one: changes only one of them has. Empty when the digests
// match; when the reviewed plan kept no list, it says so in one line.
func (r Review) Differences(now Review) []string {
	if r.Digest == now.Digest {
		return nil
	}
	if r.Changes == nil || now.Changes == nil {
		return []string{"the plan differs (the reviewed plan was too large to list its changes)"}
	}
	var out []string
	for _, c := range now.Changes {
		if !slices.Contains(r.Changes, c) {
			out = append(out, "now: "+c)
		}
	}
	for _, c := range r.Changes {
		if !slices.Contains(now.Changes, c) {
			out = append(out, "reviewed: "+c)
		}
	}
	if len(out) == 0 {
		out = []string{"objects left unchanged differ (an object's content changed with no change to apply)"}
	}
	return out
}
