package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/snapply/snapply/internal/drift"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/report"
)

func sampleDrift(n int) *drift.Report {
	r := &drift.Report{Snapshot: "20261123T061700Z-1c2d3e", Inventory: "prod/prod", Summary: drift.Summary{InSync: 3, Drifted: n}}
	for i := 0; i < n; i++ {
		r.Objects = append(r.Objects, drift.Object{
			Ref:    object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: strings.Repeat("w", 5) + string(rune('a'+i%26))},
			State:  drift.Drifted,
			Source: drift.Source{File: "deploy.yaml", Line: 1},
			Fields: []drift.Field{{Path: "spec.replicas", Git: "3", Live: "5", Manager: "kubectl-edit", Operation: "Update", Time: "2026-11-20T14:02:05Z"}},
			Diff:   "--- a (live)\n+++ a (git)\n@@ -1 +1 @@\n-  replicas: 5\n+  replicas: 3\n" + strings.Repeat(" context\n", 200),
			Adopt:  "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: wwwww" + string(rune('a'+i%26)) + "\n  namespace: prod\nspec:\n  replicas: 5\n",
		})
	}
	return r
}

func TestDriftText(t *testing.T) {
	var b bytes.Buffer
	if err := report.DriftText(&b, sampleDrift(1), report.DefaultTextOptions()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Drift of prod/prod against git: 1 drifted, 3 in sync\n",
		"~ deployment.apps/wwwwwa -n prod (drifted)  deploy.yaml:1\n",
		"    spec.replicas: git 3, live 5 (kubectl-edit, 2026-11-20T14:02:05Z)\n",
		"    adopt the live values in git: paste into the manifest (or a kustomize patch):\n      apiVersion: apps/v1\n      kind: Deployment\n      metadata:\n        name: wwwwwa\n        namespace: prod\n      spec:\n        replicas: 5\n    re-apply changes (live -> git):\n",
		"Drift: 1 object differs from git.\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
	b.Reset()
	_ = report.DriftText(&b, &drift.Report{Inventory: "prod/prod", Summary: drift.Summary{InSync: 3}}, report.DefaultTextOptions())
	if !strings.HasSuffix(b.String(), "The cluster matches git.\n") {
		t.Errorf("in sync:\n%s", b.String())
	}
}

// TestDriftMarkdownAdopt: the markdown report shows the patch that adopts
// the live values as YAML to paste, and the re-apply diff collapsed.
func TestDriftMarkdownAdopt(t *testing.T) {
	var b bytes.Buffer
	if err := report.DriftMarkdown(&b, sampleDrift(1), report.DriftMarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"adopt the live values in git: paste into the manifest (or a kustomize patch):\n\n```yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: wwwwwa\n  namespace: prod\nspec:\n  replicas: 5\n```\n",
		"<details><summary>re-apply changes (live → git)</summary>",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}

func TestDriftMarkdownFitsItsBudget(t *testing.T) {
	rep := sampleDrift(40)
	var full bytes.Buffer
	if err := report.DriftMarkdown(&full, rep, report.DriftMarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{full.Len(), 20000, 6000} {
		var b bytes.Buffer
		if err := report.DriftMarkdown(&b, rep, report.DriftMarkdownOptions{MaxBytes: max}); err != nil {
			t.Fatalf("max %d: %v", max, err)
		}
		if b.Len() > max {
			t.Errorf("max %d: %d bytes", max, b.Len())
		}
		if !strings.Contains(b.String(), "**Drift: 40 objects differ from git.**") {
			t.Errorf("max %d: no summary line", max)
		}
	}
	var b bytes.Buffer
	_ = report.DriftMarkdown(&b, rep, report.DriftMarkdownOptions{MaxBytes: 6000})
	if !strings.Contains(b.String(), "more objects are left out to fit") || strings.Contains(b.String(), "```diff") {
		t.Errorf("a cut report says nothing of what it left out:\n%s", b.String())
	}
}

// TestDriftJSONKeys: every key present, lists never null.
func TestDriftJSONKeys(t *testing.T) {
	rep := &drift.Report{Objects: []drift.Object{{State: drift.Missing}}}
	var b bytes.Buffer
	if err := report.DriftJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"snapshot", "inventory", "summary", "objects"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no key %q", k)
		}
	}
	o := got["objects"].([]any)[0].(map[string]any)
	for _, k := range []string{"ref", "state", "source", "fields", "ownership", "diff", "adopt", "message"} {
		if _, ok := o[k]; !ok {
			t.Errorf("object: no key %q", k)
		}
	}
	if o["fields"] == nil || o["ownership"] == nil {
		t.Errorf("null lists: %s", b.String())
	}
	if _, ok := o["source"].(map[string]any)["line"]; !ok {
		t.Errorf("source has no line: %s", b.String())
	}
}
