package report

import (
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/graph"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

// The page's template, style and script, embedded: an HTML report loads
// nothing at view time.
var (
	//go:embed html/page.html
	pageHTML string
	//go:embed html/page.css
	pageCSS string
	//go:embed html/page.js
	pageJS string
)

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))

// pageCSP is the page's Content-Security-Policy: nothing is loaded from
// anywhere, and only the page's own style and script (by their hashes)
// run; no form, base or frame can point elsewhere.
var pageCSP = "default-src 'none'; img-src data:; style-src " + cspHash(pageCSS) +
	"; script-src " + cspHash(pageJS) + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// htmlPage is what the template draws.
type htmlPage struct {
	Title      string
	Subtitle   []string
	Counts     []htmlCount
	Status     string
	Selects    []htmlSelect
	Risks      []htmlRisk
	Legend     []string
	Graph      *svgPage
	ItemsTitle string
	Items      []*htmlItem
	Groups     []htmlGroup
	Images     []htmlImage
	CSP        string
	CSS        template.CSS
	JS         template.JS
}

type htmlCount struct {
	Label, Class string
	N            int
}

type htmlSelect struct {
	Attr, Label string
	Values      []string
}

type htmlRisk struct {
	Item          *htmlItem
	Kind, Message string
}

type htmlGroup struct {
	Name  string
	Kinds []htmlKind
}

type htmlKind struct {
	Name  string
	Items []*htmlItem
}

type htmlImage struct {
	Ref, Kind, Namespace, Container, Before, After, Status, Text string
}

type htmlLine struct{ Class, Text string }

// htmlItem is one object: a change of a plan or a snapshot diff, or an
// object of a snapshot.
type htmlItem struct {
	ID                      string
	Ref                     string
	Kind, Namespace, Action string
	Source, Note, Message   string
	Risks                   []plan.Risk
	Conflicts               []plan.FieldConflict
	Managers                []ManagerWrite
	Fields                  []plan.FieldDiff
	Diff                    []htmlLine
	YAML                    string
	Warnings                []string
	Policy                  []plan.PolicyResult
	Open                    bool
	riskKinds               []string
	text                    string
}

// RiskKinds lists the item's risk kinds, space-separated, for the filter.
func (i *htmlItem) RiskKinds() string { return strings.Join(i.riskKinds, " ") }

// Text is what the filter box searches.
func (i *htmlItem) Text() string {
	if i.text == "" {
		i.text = strings.Join([]string{i.Ref, i.Action, i.Source, i.RiskKinds()}, " ")
	}
	return i.text
}

// svgPage is the laid-out graph with each node's item key.
type svgPage struct {
	*svgGraph
	Nodes []svgPageNode
}

type svgPageNode struct {
	svgNode
	Key string
}

func newItem(id int, ref object.Ref, action string) *htmlItem {
	return &htmlItem{ID: strconv.Itoa(id), Ref: ref.String(), Kind: ref.Kind, Namespace: namespaceOf(ref), Action: action}
}

// namespaceOf is the namespace a page groups and filters ref under.
func namespaceOf(ref object.Ref) string {
	if ref.Namespace == "" {
		return "(cluster)"
	}
	return ref.Namespace
}

// diffLines splits a unified diff into lines classed for colour.
func diffLines(diff string) []htmlLine {
	if diff == "" {
		return nil
	}
	var out []htmlLine
	sc := bufio.NewScanner(strings.NewReader(diff))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		l := sc.Text()
		c := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"):
			c = "h"
		case strings.HasPrefix(l, "+"):
			c = "a"
		case strings.HasPrefix(l, "-"):
			c = "d"
		}
		out = append(out, htmlLine{Class: c, Text: l})
	}
	return out
}

// HTMLOptions controls the HTML reports.
type HTMLOptions struct {
	// Title is the page's heading; empty means a title per report.
	Title string
	// Subtitle lines go under the title (commit, run, store).
	Subtitle []string
	// Graph, when set, is drawn as a zoomable SVG.
	Graph *graph.View
}

// HTMLPlan writes p as one self-contained HTML page: the summary, the
// risks first, every object with its action (changed fields, unified diff,
// conflicts, server message, warnings), the image inventory, the graph as
// zoomable SVG, and a filter (kind, namespace, action, risk, any text). It
// loads nothing; its Content-Security-Policy forbids every remote load;
// every text from the cluster or git is escaped.
func HTMLPlan(w io.Writer, p *plan.Plan, opts HTMLOptions) error {
	if p == nil {
		return fmt.Errorf("html report: nil plan")
	}
	pg := &htmlPage{Title: opts.Title, Subtitle: opts.Subtitle, ItemsTitle: "Changes", Legend: legend(opts.Graph)}
	if pg.Title == "" {
		pg.Title = defaultTitle
	}
	if p.Snapshot != "" {
		pg.Subtitle = append(pg.Subtitle, "against snapshot "+p.Snapshot)
	}
	for _, a := range plan.Actions {
		if n := p.Summary.Count(a); n > 0 || a == plan.Create || a == plan.Update || a == plan.Delete {
			pg.Counts = append(pg.Counts, htmlCount{Label: string(a), Class: "b-" + string(a), N: n})
		}
	}
	pg.Status = planStatus(p)
	byKey := map[object.Key]*htmlItem{}
	// Changes first in plan order, unchanged objects after them.
	for pass := 0; pass < 2; pass++ {
		for _, c := range p.Changes {
			if (c.Action == plan.Unchanged) != (pass == 1) {
				continue
			}
			it := newItem(len(pg.Items), c.Ref, string(c.Action))
			if c.Source.File != "" {
				it.Source = c.Source.String()
			}
			it.Message, it.Risks, it.Conflicts, it.Fields, it.Warnings = c.Message, c.Risks, c.Conflicts, c.Fields, c.Warnings
			it.Diff, it.Policy = diffLines(c.Diff), c.Policy
			for _, r := range c.Risks {
				if !containsStr(it.riskKinds, string(r.Kind)) {
					it.riskKinds = append(it.riskKinds, string(r.Kind))
				}
			}
			pg.Items = append(pg.Items, it)
			byKey[c.Ref.Key()] = it
		}
	}
	pg.Risks = planRisks(p, byKey)
	for _, im := range p.Images {
		pg.Images = append(pg.Images, htmlImage{Ref: im.Ref.String(), Kind: im.Ref.Kind, Namespace: namespaceOf(im.Ref),
			Container: im.Container, Before: im.Before, After: im.After, Status: string(im.Status),
			Text: im.Ref.String() + " " + im.Container + " " + im.Before + " " + im.After})
	}
	pg.Graph = pageGraph(opts.Graph, byKey)
	pg.Selects = selects(pg.Items, pg.Risks)
	return writePage(w, pg)
}

// planStatus says in one line whether the plan applies.
func planStatus(p *plan.Plan) string {
	switch {
	case p.HasErrors():
		return fmt.Sprintf("The plan cannot be applied: %d conflicts and %d invalid objects.", p.Summary.Conflict, p.Summary.Invalid)
	case !p.HasChanges():
		return "No changes: the cluster matches the desired state."
	}
	return ""
}

// planRisks lists every risk of the plan, most severe kind first.
func planRisks(p *plan.Plan, byKey map[object.Key]*htmlItem) []htmlRisk {
	var out []htmlRisk
	for _, c := range p.Changes {
		for _, r := range c.Risks {
			out = append(out, htmlRisk{Item: byKey[c.Ref.Key()], Kind: string(r.Kind), Message: r.Message})
		}
	}
	order := map[string]int{}
	for i, k := range plan.RiskKinds {
		order[string(k)] = i
	}
	sort.SliceStable(out, func(i, j int) bool { return order[out[i].Kind] < order[out[j].Kind] })
	return out
}

// legend lists the states a drawing of v uses.
func legend(v *graph.View) []string {
	if v == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, n := range v.Nodes {
		seen[nodeClass(n)] = true
	}
	var out []string
	for _, c := range classOrder {
		if seen[c] {
			out = append(out, c)
		}
	}
	return out
}

// pageGraph lays v out and links each node to its item.
func pageGraph(v *graph.View, byKey map[object.Key]*htmlItem) *svgPage {
	g := layoutSVG(v)
	if g == nil {
		return nil
	}
	pg := &svgPage{svgGraph: g}
	for i, n := range g.Nodes {
		key := ""
		if it := byKey[v.Nodes[i].Ref.Key()]; it != nil {
			key = it.ID
		}
		pg.Nodes = append(pg.Nodes, svgPageNode{svgNode: n, Key: key})
	}
	return pg
}

// selects builds the filter's drop-downs from the values on the page.
func selects(items []*htmlItem, risks []htmlRisk) []htmlSelect {
	uniq := func(f func(*htmlItem) []string) []string {
		seen := map[string]bool{}
		var out []string
		for _, it := range items {
			for _, v := range f(it) {
				if v != "" && !seen[v] {
					seen[v] = true
					out = append(out, v)
				}
			}
		}
		sort.Strings(out)
		return out
	}
	out := []htmlSelect{
		{Attr: "kind", Label: "kind", Values: uniq(func(i *htmlItem) []string { return []string{i.Kind} })},
		{Attr: "ns", Label: "namespace", Values: uniq(func(i *htmlItem) []string { return []string{i.Namespace} })},
		{Attr: "action", Label: "action", Values: uniq(func(i *htmlItem) []string { return []string{i.Action} })},
	}
	if len(risks) > 0 {
		out = append(out, htmlSelect{Attr: "risk", Label: "risk", Values: uniq(func(i *htmlItem) []string { return i.riskKinds })})
	}
	return out
}

// writePage renders pg with the embedded style, script and policy.
func writePage(w io.Writer, pg *htmlPage) error {
	pg.CSP, pg.CSS, pg.JS = pageCSP, template.CSS(pageCSS), template.JS(pageJS)
	bw := bufio.NewWriterSize(w, 256*1024)
	if err := pageTemplate.Execute(bw, pg); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

func containsStr(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// HTMLSnapshot writes the objects of a snapshot as one self-contained HTML
// page: grouped by namespace and kind, each opening as YAML (without its
// managedFields), with the field managers that wrote it and when, the last
// change first; and the graph of the objects. objs must be redacted (the
// store holds Secrets redacted).
func HTMLSnapshot(w io.Writer, objs []*unstructured.Unstructured, opts HTMLOptions) error {
	pg := &htmlPage{Title: opts.Title, Subtitle: opts.Subtitle, Legend: legend(opts.Graph)}
	if pg.Title == "" {
		pg.Title = "snapply snapshot"
	}
	sorted := append([]*unstructured.Unstructured(nil), objs...)
	sort.SliceStable(sorted, func(i, j int) bool { return object.Compare(object.RefOf(sorted[i]), object.RefOf(sorted[j])) < 0 })
	byKey := map[object.Key]*htmlItem{}
	var all []*htmlItem
	nsIndex := map[string]int{}
	for _, u := range sorted {
		ref := object.RefOf(u)
		it := newItem(len(all), ref, graph.StateLive)
		it.Managers = managersOf(u)
		if len(it.Managers) > 0 {
			it.Note = "last changed " + it.Managers[0].Time + " by " + it.Managers[0].Manager
		}
		c := u.DeepCopy()
		c.SetManagedFields(nil)
		b, err := yaml.Marshal(c.Object)
		if err != nil {
			return fmt.Errorf("html report: %s: %w", ref, err)
		}
		it.YAML = string(b)
		all = append(all, it)
		byKey[ref.Key()] = it
		gi, ok := nsIndex[it.Namespace]
		if !ok {
			gi = len(pg.Groups)
			nsIndex[it.Namespace] = gi
			pg.Groups = append(pg.Groups, htmlGroup{Name: it.Namespace})
		}
		grp := &pg.Groups[gi]
		if n := len(grp.Kinds); n == 0 || grp.Kinds[n-1].Name != it.Kind {
			grp.Kinds = append(grp.Kinds, htmlKind{Name: it.Kind})
		}
		k := &grp.Kinds[len(grp.Kinds)-1]
		k.Items = append(k.Items, it)
	}
	pg.Counts = []htmlCount{{Label: "objects", Class: "b-live", N: len(all)}, {Label: "namespaces", Class: "b-live", N: len(pg.Groups)}}
	pg.Graph = pageGraph(opts.Graph, byKey)
	pg.Selects = selects(all, nil)[:2]
	return writePage(w, pg)
}

// managersOf lists the managedFields entries of u, the latest first.
func managersOf(u *unstructured.Unstructured) []ManagerWrite {
	var out []ManagerWrite
	for _, mf := range u.GetManagedFields() {
		m := ManagerWrite{Manager: mf.Manager, Operation: string(mf.Operation), Subresource: mf.Subresource}
		if mf.Time != nil {
			m.Time = mf.Time.UTC().Format("2006-01-02T15:04:05Z")
		}
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time > out[j].Time })
	return out
}

// HTMLSnapshotDiff writes d as one self-contained HTML page in the style
// of the plan: the counts, every object added, removed or changed with its
// unified diff and the managers that wrote it, and the filter.
func HTMLSnapshotDiff(w io.Writer, d SnapshotDiff, opts HTMLOptions) error {
	pg := &htmlPage{Title: opts.Title, Subtitle: opts.Subtitle, ItemsTitle: "Changes"}
	if pg.Title == "" {
		pg.Title = "snapply diff " + d.From + " " + d.To
	}
	s := d.Summary
	pg.Counts = []htmlCount{{"added", "b-added", s.Added}, {"removed", "b-removed", s.Removed}, {"changed", "b-changed", s.Changed}, {"unchanged", "b-unchanged", s.Unchanged}}
	if !s.Differs() {
		pg.Status = "No differences."
	}
	for _, c := range d.Changes {
		it := newItem(len(pg.Items), c.Ref, c.Change)
		it.Diff, it.Managers = diffLines(c.Diff), c.Managers
		pg.Items = append(pg.Items, it)
	}
	pg.Selects = selects(pg.Items, nil)
	return writePage(w, pg)
}
