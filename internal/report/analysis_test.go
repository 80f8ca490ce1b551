package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

// TestMarkdownRisksAndImagesAreBounded: the risk and image tables stay
// small enough for a PR comment however large the plan; the rest is
// counted.
func TestMarkdownRisksAndImagesAreBounded(t *testing.T) {
	var changes []plan.Change
	var images []plan.ImageUse
	for i := range 150 {
		ref := object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: fmt.Sprintf("app-%03d", i)}
		changes = append(changes, plan.Change{Ref: ref, Action: plan.Create, Risks: []plan.Risk{{Kind: plan.RiskExposure, Message: "a NodePort Service exposes its pods"}}})
		images = append(images, plan.ImageUse{Ref: ref, Container: "app", After: "nginx:1.27.3", Status: plan.ImageNew})
	}
	p := planOf(changes...)
	p.Images = images
	var buf bytes.Buffer
	if err := Markdown(&buf, p, DefaultMarkdownOptions()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"**Risks: 150 exposure.**",
		"_100 more risks in the details below and in the JSON plan._",
		"<details><summary>Images (150 new, 0 changed, 0 removed, 0 unchanged)</summary>",
		"_50 more images in the JSON plan._",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if n := strings.Count(out, "| **exposure** |"); n != maxRiskRows {
		t.Errorf("%d risk rows, want %d", n, maxRiskRows)
	}
}
