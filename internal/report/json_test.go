package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

func TestJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, samplePlan()); err != nil {
		t.Fatal(err)
	}
	golden(t, "json", buf.Bytes())
}

// kind names the JSON type a contract key must have.
type kind int

const (
	str kind = iota
	num
	boolean
	obj
	arr
)

// checkKeys checks that m holds every key of want with the JSON type it
// names.
func checkKeys(t *testing.T, where string, m map[string]any, want map[string]kind) {
	t.Helper()
	for key, k := range want {
		v, ok := m[key]
		if !ok {
			t.Errorf("%s: key %q missing", where, key)
			continue
		}
		var good bool
		switch k {
		case str:
			_, good = v.(string)
		case num:
			_, good = v.(float64)
		case boolean:
			_, good = v.(bool)
		case obj:
			_, good = v.(map[string]any)
		case arr:
			_, good = v.([]any)
		}
		if !good {
			t.Errorf("%s: key %q is %T (%v), want JSON type %d", where, key, v, v, k)
		}
	}
}

// TestJSONContract pins the keys and types consumers rely on; a change to
// the plan types that breaks them must fail here.
func TestJSONContract(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, samplePlan()); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	checkKeys(t, "plan", doc, map[string]kind{"snapshot": str, "summary": obj, "changes": arr, "images": arr})
	images, _ := doc["images"].([]any)
	if len(images) != len(samplePlan().Images) {
		t.Errorf("%d images, want %d", len(images), len(samplePlan().Images))
	}
	for _, item := range images {
		m, _ := item.(map[string]any)
		checkKeys(t, "images[]", m, map[string]kind{"ref": obj, "container": str, "before": str, "after": str, "status": str})
		if s, _ := m["status"].(string); s != "new" && s != "removed" && s != "changed" && s != "unchanged" {
			t.Errorf("images[]: unknown status %q", s)
		}
	}
	summary, _ := doc["summary"].(map[string]any)
	checkKeys(t, "summary", summary, map[string]kind{
		"create": num, "update": num, "unchanged": num, "delete": num, "conflict": num, "invalid": num, "pending": num,
	})
	if diff := cmp.Diff(map[string]any{
		"create": 2.0, "update": 1.0, "unchanged": 2.0, "delete": 1.0, "conflict": 1.0, "invalid": 1.0, "pending": 1.0,
	}, summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}

	changes, _ := doc["changes"].([]any)
	if len(changes) != len(samplePlan().Changes) {
		t.Fatalf("%d changes, want every object of the plan (%d), unchanged ones included", len(changes), len(samplePlan().Changes))
	}
	actions := map[string]bool{}
	for _, a := range plan.Actions {
		actions[string(a)] = true
	}
	for i, item := range changes {
		c, _ := item.(map[string]any)
		where := fmt.Sprintf("changes[%d]", i)
		checkKeys(t, where, c, map[string]kind{
			"ref": obj, "action": str, "source": obj, "diff": str, "conflicts": arr, "message": str,
			"fields": arr, "risks": arr, "verified": str,
		})
		fields, _ := c["fields"].([]any)
		for _, f := range fields {
			m, _ := f.(map[string]any)
			checkKeys(t, where+".fields[]", m, map[string]kind{"path": str, "op": str, "before": str, "after": str})
			if op, _ := m["op"].(string); op != "add" && op != "remove" && op != "change" {
				t.Errorf("%s.fields[]: unknown op %q", where, op)
			}
		}
		risks, _ := c["risks"].([]any)
		for _, r := range risks {
			m, _ := r.(map[string]any)
			checkKeys(t, where+".risks[]", m, map[string]kind{"kind": str, "message": str})
			if k, _ := m["kind"].(string); !slices.Contains(plan.RiskKinds, plan.RiskKind(k)) {
				t.Errorf("%s.risks[]: unknown kind %q", where, k)
			}
		}
		ref, _ := c["ref"].(map[string]any)
		checkKeys(t, where+".ref", ref, map[string]kind{"group": str, "version": str, "kind": str, "namespace": str, "name": str})
		source, _ := c["source"].(map[string]any)
		checkKeys(t, where+".source", source, map[string]kind{"file": str, "line": num})
		if a, _ := c["action"].(string); !actions[a] {
			t.Errorf("%s: unknown action %q", where, a)
		}
		conflicts, _ := c["conflicts"].([]any)
		for _, fc := range conflicts {
			m, _ := fc.(map[string]any)
			checkKeys(t, where+".conflicts[]", m, map[string]kind{"field": str, "manager": str})
		}
	}
	web, _ := changes[6].(map[string]any)
	if diff := cmp.Diff(map[string]any{
		"path": "spec.template.spec.containers[name=web].image", "op": "change", "before": "nginx:1.27.0", "after": "nginx:1.27.3",
	}, web["fields"].([]any)[2]); diff != "" {
		t.Errorf("fields[2] (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("broken-ref", web["risks"].([]any)[0].(map[string]any)["kind"]); diff != "" {
		t.Errorf("risks[0].kind (-want +got):\n%s", diff)
	}
	conflict, _ := changes[5].(map[string]any)
	if diff := cmp.Diff([]any{
		map[string]any{"field": ".spec.replicas", "manager": "kubectl-edit"},
		map[string]any{"field": `.spec.template.spec.containers[name="api"].resources.limits.memory`, "manager": "helm"},
	}, conflict["conflicts"]); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
}

func TestJSONEmptyListsAreNotNull(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, &plan.Plan{Snapshot: "s"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"changes": []`) {
		t.Errorf("empty plan: changes is not []:\n%s", buf.String())
	}
	buf.Reset()
	if err := JSON(&buf, planOf(samplePlan().Changes[3])); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"conflicts": []`, `"diff": ""`, `"message": ""`, `"fields": []`, `"risks": []`, `"images": []`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("unchanged object: output lacks %s:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "null") {
		t.Errorf("output holds null:\n%s", buf.String())
	}
}

// TestJSONRoundTrip checks that the JSON holds everything the plan holds:
// decoded into plan types, it gives back the plan.
func TestJSONRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	want := samplePlan()
	if err := JSON(&buf, want); err != nil {
		t.Fatal(err)
	}
	var got plan.Plan
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for i := range got.Changes {
		c := &got.Changes[i]
		// Decoding [] gives an empty slice where the plan has nil.
		if len(c.Conflicts) == 0 {
			c.Conflicts = nil
		}
		if len(c.Images) == 0 {
			c.Images = nil
		}
		if len(c.Warnings) == 0 {
			c.Warnings = nil
		}
		if len(c.Fields) == 0 {
			c.Fields = nil
		}
		if len(c.Risks) == 0 {
			c.Risks = nil
		}
		if len(c.Policy) == 0 {
			c.Policy = nil
		}
	}
	if diff := cmp.Diff(want, &got); diff != "" {
		t.Errorf("plan after a JSON round trip (-want +got):\n%s", diff)
	}
}

// verified says how each change was checked, and the headers count them.
func TestVerified(t *testing.T) {
	p := &plan.Plan{Changes: []plan.Change{
		{Ref: object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "known"}, Action: plan.Unchanged, Verified: plan.VerifiedRecord},
		{Ref: object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "same"}, Action: plan.Unchanged, Verified: plan.VerifiedDryRun},
		{Ref: object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "new"}, Action: plan.Create, Verified: plan.VerifiedDryRun, Diff: "+x"},
		{Ref: object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "gone"}, Action: plan.Delete},
	}}
	p.Summary = plan.Summarize(p.Changes)
	var buf bytes.Buffer
	if err := JSON(&buf, p); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Changes []struct {
			Ref      struct{ Name string } `json:"ref"`
			Verified string                `json:"verified"`
		} `json:"changes"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range doc.Changes {
		got[c.Ref.Name] = c.Verified
	}
	if diff := cmp.Diff(map[string]string{"known": "record", "same": "dry-run", "new": "dry-run", "gone": ""}, got); diff != "" {
		t.Errorf("verified (-want +got):\n%s", diff)
	}
	buf.Reset()
	if err := Text(&buf, p, DefaultTextOptions()); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(buf.String(), "\n"); !strings.HasSuffix(first, "; 2 dry runs, 1 known unchanged") {
		t.Errorf("text header %q does not count the checks", first)
	}
	buf.Reset()
	if err := Markdown(&buf, p, DefaultMarkdownOptions()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Checked: 2 dry runs, 1 known unchanged.") {
		t.Errorf("markdown does not count the checks:\n%s", buf.String())
	}
}
