package action

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

func reviewObj(kind, name string, data map[string]any) object.Object {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "prod-eu"}, "data": data}}
	return object.Object{Ref: object.RefOf(u), Obj: u}
}

func reviewPlan(objs ...object.Object) *plan.Plan {
	p := &plan.Plan{}
	for i, o := range objs {
		a := plan.Create
		if i == 0 {
			a = plan.Unchanged
		}
		p.Changes = append(p.Changes, plan.Change{Ref: o.Ref, Action: a})
	}
	return p
}

func TestReviewMarkerRoundTrips(t *testing.T) {
	objs := []object.Object{reviewObj("ConfigMap", "a", map[string]any{"k": "1"}), reviewObj("ConfigMap", "web-config--v2,x>y~z%", map[string]any{"k": "2"})}
	r := ReviewOf(reviewPlan(objs...), objs, nil)
	m := r.Marker()
	if strings.Count(m, "-->") != 1 || !strings.HasSuffix(m, " -->") {
		t.Fatalf("marker can be closed early: %s", m)
	}
	got, ok := ParseReview("## plan\n" + m + "\nrest")
	if !ok {
		t.Fatalf("marker not found in %s", m)
	}
	if d := cmp.Diff(r, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if len(got.Changes) != 1 || !strings.HasPrefix(got.Changes[0], "create configmap/web-config--v2,x>y~z% -n prod-eu ") {
		t.Errorf("changes %q", got.Changes)
	}
	if diffs := r.Differences(got); diffs != nil {
		t.Errorf("same review differs: %v", diffs)
	}
}

func TestReviewDifferences(t *testing.T) {
	a := reviewObj("ConfigMap", "a", map[string]any{"k": "1"})
	b := reviewObj("ConfigMap", "b", map[string]any{"k": "2"})
	b2 := reviewObj("ConfigMap", "b", map[string]any{"k": "moved"})
	reviewed := ReviewOf(reviewPlan(a, b), []object.Object{a, b}, nil)
	now := ReviewOf(reviewPlan(a, b2), []object.Object{a, b2}, nil)
	diffs := reviewed.Differences(now)
	if len(diffs) != 2 || !strings.HasPrefix(diffs[0], "now: create configmap/b -n prod-eu") || !strings.HasPrefix(diffs[1], "reviewed: create configmap/b -n prod-eu") {
		t.Errorf("differences %q", diffs)
	}
	// An unchanged object whose content moved changes the digest too.
	a2 := reviewObj("ConfigMap", "a", map[string]any{"k": "x"})
	if d := reviewed.Differences(ReviewOf(reviewPlan(a2, b), []object.Object{a2, b}, nil)); len(d) != 1 || !strings.Contains(d[0], "left unchanged") {
		t.Errorf("differences %q", d)
	}
}

// Secret values never reach the comment; with a store key a changed value
// still changes the digest, without one it cannot.
func TestReviewOfSecrets(t *testing.T) {
	s1 := reviewObj("Secret", "db", map[string]any{"password": "aHVudGVyMg=="})
	s2 := reviewObj("Secret", "db", map[string]any{"password": "c3dvcmRmaXNo"})
	key := []byte("0123456789abcdef0123456789abcdef")
	with1, with2 := ReviewOf(reviewPlan(s1), []object.Object{s1}, key), ReviewOf(reviewPlan(s2), []object.Object{s2}, key)
	if with1.Digest == with2.Digest {
		t.Error("with a key, a changed Secret value does not change the digest")
	}
	without1, without2 := ReviewOf(reviewPlan(s1), []object.Object{s1}, nil), ReviewOf(reviewPlan(s2), []object.Object{s2}, nil)
	if without1.Digest != without2.Digest {
		t.Error("without a key, the digest depends on a Secret value (a guess could be checked against it)")
	}
	for _, m := range []string{with1.Marker(), without1.Marker()} {
		if strings.Contains(m, "aHVudGVyMg") || strings.Contains(m, "hunter2") {
			t.Errorf("marker holds the Secret value: %s", m)
		}
	}
	if got := s1.Obj.Object["data"].(map[string]any)["password"]; got != "aHVudGVyMg==" {
		t.Errorf("ReviewOf changed the desired object: %v", got)
	}
}
