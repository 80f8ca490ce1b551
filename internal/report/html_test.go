package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/graph"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

// parseHTML parses a page and fails the test when it is not HTML.
func parseHTML(t *testing.T, page string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// walk calls f on every element of n.
func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, c string) bool {
	return strings.Contains(" "+attr(n, "class")+" ", " "+c+" ")
}

func text(n *html.Node) string {
	var b strings.Builder
	var f func(*html.Node)
	f = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			f(c)
		}
	}
	f(n)
	return b.String()
}

func TestHTMLPlan(t *testing.T) {
	p := samplePlan()
	// Text from the cluster that tries to become markup.
	p.Changes[0].Risks = append(p.Changes[0].Risks, plan.Risk{Kind: plan.RiskWarning, Message: `<script>alert(1)</script>`})
	p.Changes[0].Diff += "+  annotations: {x: \"<script>alert(1)</script>\"}\n"
	g := graph.New(nil)
	v := g.View(graph.ViewOptions{})
	v.Nodes = []graph.DrawNode{{ID: "n0", Ref: p.Changes[0].Ref, State: "delete", Risk: true}, {ID: "n1", Ref: p.Changes[1].Ref, State: string(p.Changes[1].Action)}}
	v.Edges = []graph.DrawEdge{{From: "n1", To: "n0", Kind: graph.Owner}}
	var b bytes.Buffer
	if err := HTMLPlan(&b, p, HTMLOptions{Graph: v}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	doc := parseHTML(t, page)

	var scripts, styles, items, nodes, risks int
	var csp string
	walk(doc, func(n *html.Node) {
		switch {
		case n.Data == "script":
			scripts++
			if attr(n, "src") != "" || !strings.Contains(pageCSP, cspHash(text(n))) {
				t.Errorf("a script that the policy does not name: src=%q", attr(n, "src"))
			}
		case n.Data == "style":
			styles++
			if !strings.Contains(pageCSP, cspHash(text(n))) {
				t.Error("a style that the policy does not name")
			}
		case n.Data == "meta" && attr(n, "http-equiv") == "Content-Security-Policy":
			csp = attr(n, "content")
		case n.Data == "details" && hasClass(n, "item"):
			items++
		case n.Data == "g" && hasClass(n, "node"):
			nodes++
		case n.Data == "li" && hasClass(n, "risk-row"):
			risks++
		case n.Data == "link" || n.Data == "img" || n.Data == "iframe":
			t.Errorf("a <%s> element: a report loads nothing", n.Data)
		}
	})
	if scripts != 1 || styles != 1 {
		t.Errorf("%d scripts and %d styles, want 1 and 1", scripts, styles)
	}
	if !strings.HasPrefix(csp, "default-src 'none';") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "http") {
		t.Errorf("policy %q", csp)
	}
	if items != len(p.Changes) {
		t.Errorf("%d items, want one per change (%d)", items, len(p.Changes))
	}
	if nodes != 2 {
		t.Errorf("%d graph nodes, want 2", nodes)
	}
	want := 0
	for _, c := range p.Changes {
		want += len(c.Risks)
	}
	if risks != want {
		t.Errorf("%d risk rows, want %d", risks, want)
	}
	if strings.Contains(page, "<script>alert(1)") {
		t.Error("text from the cluster became markup")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("text from the cluster is not shown escaped")
	}
	// Risks come before the changes.
	if strings.Index(page, `id="risks"`) > strings.Index(page, `id="changes"`) {
		t.Error("risks after the changes")
	}
}

// TestHTMLPlanPolicy: an object's policy verdicts (of --policy and of the
// cluster's admission chain) show in its section of the HTML plan.
func TestHTMLPlanPolicy(t *testing.T) {
	p := samplePlan()
	p.Changes[0].Policy = []plan.PolicyResult{{Rule: "ValidatingAdmissionPolicy/team-label", Level: plan.PolicyWarn, Message: "every <ConfigMap> needs a team label", Admission: true}}
	var b bytes.Buffer
	if err := HTMLPlan(&b, p, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `<p class="msg">policy warn <code>ValidatingAdmissionPolicy/team-label</code>: every &lt;ConfigMap&gt; needs a team label</p>`
	if !strings.Contains(b.String(), want) {
		t.Errorf("no %s in the page", want)
	}
}

func TestHTMLSnapshotGroupsAndManagers(t *testing.T) {
	mk := func(kind, ns, name string, at time.Time, manager string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": name}}}
		if ns != "" {
			u.SetNamespace(ns)
		}
		u.Object["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{
			"manager": manager, "operation": "Apply", "time": at.Format(time.RFC3339), "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{},
		}}
		return u
	}
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	objs := []*unstructured.Unstructured{
		mk("ConfigMap", "b", "two", at, "snapply"),
		mk("ConfigMap", "a", "one", at.Add(time.Hour), "kubectl-edit"),
		mk("Namespace", "", "a", at, "snapply"),
		mk("Service", "a", "web", at, "snapply"),
	}
	var b bytes.Buffer
	if err := HTMLSnapshot(&b, objs, HTMLOptions{Graph: graph.New(objs).View(graph.ViewOptions{})}); err != nil {
		t.Fatal(err)
	}
	doc := parseHTML(t, b.String())
	var groups []string
	walk(doc, func(n *html.Node) {
		if n.Data == "section" && hasClass(n, "group") {
			var kinds []string
			walk(n, func(k *html.Node) {
				if k.Data == "h4" {
					kinds = append(kinds, text(k))
				}
			})
			groups = append(groups, attr(n, "id")+": "+strings.Join(kinds, ","))
		}
	})
	wantGroups := "ns-(cluster): Namespace (1)|ns-a: ConfigMap (1),Service (1)|ns-b: ConfigMap (1)"
	if got := strings.Join(groups, "|"); got != wantGroups {
		t.Errorf("groups %q, want %q", got, wantGroups)
	}
	page := b.String()
	for _, want := range []string{"last changed 2026-11-21T11:00:00Z by kubectl-edit", "<td>kubectl-edit</td><td>Apply</td><td>2026-11-21T11:00:00Z</td>", "kind: ConfigMap"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "fieldsV1") {
		t.Error("the YAML shows managedFields")
	}
}

func TestHTMLSnapshotDiff(t *testing.T) {
	d := SnapshotDiff{From: "A", To: "B", Summary: SnapshotDiffSummary{Changed: 1, Added: 1}, Changes: []ObjectChange{
		{Ref: object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}, Change: ChangeChanged, Diff: "--- a\n+++ b\n@@ -1 +1 @@\n-k: 1\n+k: 2\n",
			Managers: []ManagerWrite{{Manager: "kubectl-edit", Operation: "Update", Time: "2026-11-21T10:00:00Z"}}},
		{Ref: object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "y"}, Change: ChangeAdded, Diff: "+k: 1\n"},
	}}
	var b bytes.Buffer
	if err := HTMLSnapshotDiff(&b, d, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<span class="d">-k: 1</span><span class="a">&#43;k: 2</span>`, "<td>kubectl-edit</td>", `data-action="added"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := len(regexp.MustCompile(`<details class="item row"`).FindAllString(page, -1)); n != 2 {
		t.Errorf("%d items, want 2", n)
	}
}
