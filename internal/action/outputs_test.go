package action

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/plan"
)

func TestSetOutputs(t *testing.T) {
	r := newRunner(t, pushMain)
	o := Outputs{
		HasChanges:   true,
		Summary:      plan.Summary{Create: 2, Update: 1, Unchanged: 7, Delete: 1},
		StorePath:    "snapply.db",
		ArtifactName: "snapply-prod-9876543210-1",
		SnapshotID:   "01JNQ7ZK3V8Y4TQ2B6M5R9W1XC",
		CommentURL:   "https://github.com/acme/platform-deploy/pull/42#issuecomment-2700000001",
		ReviewedPlan: "same",
		UploadStore:  true,
		PlanHTML:     "snapply-plan.html",
	}
	if err := SetOutputs(r.action(), o); err != nil {
		t.Fatal(err)
	}
	got := readOutputs(t, r.env["GITHUB_OUTPUT"])
	want := map[string]string{
		"has-changes":   "true",
		"summary":       `{"create":2,"update":1,"unchanged":7,"delete":1,"conflict":0,"invalid":0,"pending":0}`,
		"store-path":    "snapply.db",
		"artifact-name": "snapply-prod-9876543210-1",
		"snapshot-id":   "01JNQ7ZK3V8Y4TQ2B6M5R9W1XC",
		"comment-url":   "https://github.com/acme/platform-deploy/pull/42#issuecomment-2700000001",
		"rollback":      "false",
		"reviewed-plan": "same",
		"upload-store":  "true",
		"plan-html":     "snapply-plan.html",
		"drifted":       "false",
		"drift-count":   "0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GITHUB_OUTPUT (-want +got):\n%s", diff)
	}
	// A workflow reads the summary back with fromJSON.
	var s plan.Summary
	if err := json.Unmarshal([]byte(got["summary"]), &s); err != nil || s != o.Summary {
		t.Errorf("summary output reads back as %+v, %v; want %+v", s, err, o.Summary)
	}
	if r.out.Len() != 0 {
		t.Errorf("printed %q: outputs go to the file only", r.out.String())
	}
}

func TestSetOutputsNothingToDo(t *testing.T) {
	r := newRunner(t, pushBranch)
	if err := SetOutputs(r.action(), Outputs{Rollback: true}); err != nil {
		t.Fatal(err)
	}
	got := readOutputs(t, r.env["GITHUB_OUTPUT"])
	if got["summary"] != "{}" || got["has-changes"] != "false" || got["rollback"] != "true" || got["comment-url"] != "" {
		t.Errorf("outputs = %q, want summary {}, has-changes false, rollback true, empty comment-url", got)
	}
}

func TestSetOutputsOutsideActions(t *testing.T) {
	// go-githubactions panics here on its own; SetOutputs must not.
	r := newBareRunner(t)
	if err := SetOutputs(r.action(), Outputs{HasChanges: true, Summary: plan.Summary{Create: 1}}); err != nil {
		t.Errorf("SetOutputs without GITHUB_OUTPUT: %v", err)
	}
	if r.out.Len() != 0 {
		t.Errorf("printed %q", r.out.String())
	}
}

func TestSetOutputsErrors(t *testing.T) {
	t.Run("unwritable file", func(t *testing.T) {
		r := newRunner(t, pushMain)
		r.env["GITHUB_OUTPUT"] = t.TempDir() // a directory
		err := SetOutputs(r.action(), Outputs{})
		if err == nil || !strings.HasPrefix(err.Error(), "GITHUB_OUTPUT: ") {
			t.Errorf("error = %v, want one naming GITHUB_OUTPUT", err)
		}
	})
	t.Run("delimiter in a value", func(t *testing.T) {
		r := newRunner(t, pushMain)
		err := SetOutputs(r.action(), Outputs{StorePath: "x\n" + fileCommandDelimiter + "\nhas-changes<<EOF"})
		if err == nil || !strings.HasPrefix(err.Error(), "output store-path: ") {
			t.Errorf("error = %v, want one naming store-path", err)
		}
		if data, _ := os.ReadFile(r.env["GITHUB_OUTPUT"]); len(data) != 0 {
			t.Errorf("wrote %q, want nothing", data)
		}
	})
	t.Run("summary that is not JSON", func(t *testing.T) {
		r := newRunner(t, pushMain)
		err := SetOutputs(r.action(), Outputs{Summary: func() {}})
		if err == nil || !strings.HasPrefix(err.Error(), "output summary: ") {
			t.Errorf("error = %v, want one naming summary", err)
		}
	})
}
