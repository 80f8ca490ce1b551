package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/snapply/snapply/internal/graph"
)

// GraphFormats are the formats Graph writes.
var GraphFormats = []string{"mermaid", "dot", "json", "text"}

// nodeColors are the fill and stroke of a drawn node, by state; a node with
// a risk is drawn with the risk colours.
var nodeColors = map[string][2]string{
	"create":           {"#dafbe1", "#1a7f37"},
	"update":           {"#fff8c5", "#9a6700"},
	"delete":           {"#ffebe9", "#cf222e"},
	"unchanged":        {"#f6f8fa", "#8c959f"},
	"conflict":         {"#fbefff", "#8250df"},
	"invalid":          {"#fbefff", "#8250df"},
	"pending":          {"#ddf4ff", "#0969da"},
	graph.StateLive:    {"#ffffff", "#d0d7de"},
	graph.StateMissing: {"#ffffff", "#cf222e"},
	"risk":             {"#ffd8d3", "#a40e26"},
}

// nodeClass returns the class a node is drawn with: its state, or "risk".
func nodeClass(n graph.DrawNode) string {
	if n.Risk {
		return "risk"
	}
	if _, ok := nodeColors[n.State]; ok {
		return n.State
	}
	return graph.StateLive
}

// nodeState is a node's state, with "risk" when it has one.
func nodeState(n graph.DrawNode) string {
	if n.Risk {
		return n.State + ", risk"
	}
	return n.State
}

// nodeCaption is a node's label and its state.
func nodeCaption(n graph.DrawNode) string {
	return n.Label() + " (" + nodeState(n) + ")"
}

// Graph writes the view v in format: "mermaid" (a flowchart, nodes coloured
// by state), "dot" (Graphviz), "json" or "text".
func Graph(w io.Writer, v *graph.View, format string) error {
	if v == nil {
		return errors.New("graph report: nil view")
	}
	var out string
	switch format {
	case "mermaid":
		out = Mermaid(v)
	case "dot":
		out = dot(v)
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Errorf("graph report: %w", err)
		}
		out = string(b) + "\n"
	case "text", "":
		out = graphText(v)
	default:
		return fmt.Errorf("graph report: unknown format %q: want %s", format, strings.Join(GraphFormats, ", "))
	}
	if _, err := io.WriteString(w, out); err != nil {
		return fmt.Errorf("graph report: %w", err)
	}
	return nil
}

// Mermaid renders v as a Mermaid flowchart: one node per object, labelled
// with its identity and state and coloured by state, one arrow per edge
// kind between two objects, labelled with the kind.
func Mermaid(v *graph.View) string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	used := map[string]bool{}
	for _, n := range v.Nodes {
		c := nodeClass(n)
		used[c] = true
		fmt.Fprintf(&b, "  %s[\"%s\"]:::%s\n", n.ID, mermaidText(nodeCaption(n)), c)
	}
	for _, e := range v.Edges {
		fmt.Fprintf(&b, "  %s -->|%s| %s\n", e.From, mermaidText(string(e.Kind)), e.To)
	}
	for _, c := range classOrder {
		if used[c] {
			col := nodeColors[c]
			fmt.Fprintf(&b, "  classDef %s fill:%s,stroke:%s,color:#1f2328\n", c, col[0], col[1])
		}
	}
	return b.String()
}

// classOrder is the order classes are defined in.
var classOrder = []string{"create", "update", "delete", "unchanged", "conflict", "invalid", "pending", "risk", graph.StateLive, graph.StateMissing}

// mermaidText escapes text for a quoted Mermaid label with its entity
// codes: no quote, angle bracket, pipe or markdown can end or break it.
func mermaidText(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "|", "#124;", "`", "#96;", "\n", " ")
	return r.Replace(s)
}

// dot renders v in Graphviz's DOT language.
func dot(v *graph.View) string {
	var b strings.Builder
	b.WriteString("digraph snapply {\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n")
	for _, n := range v.Nodes {
		col := nodeColors[nodeClass(n)]
		fmt.Fprintf(&b, "  %s [label=%s, fillcolor=%q, color=%q];\n", n.ID, dotString(nodeCaption(n)), col[0], col[1])
	}
	for _, e := range v.Edges {
		fmt.Fprintf(&b, "  %s -> %s [label=%s];\n", e.From, e.To, dotString(string(e.Kind)))
	}
	b.WriteString("}\n")
	return b.String()
}

// dotString quotes s for DOT.
func dotString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", " ").Replace(s) + `"`
}

// graphText renders v for a terminal: each object with its state, and
// under it the objects it refers to.
func graphText(v *graph.View) string {
	var b strings.Builder
	byID := map[string]graph.DrawNode{}
	for _, n := range v.Nodes {
		byID[n.ID] = n
	}
	for _, n := range v.Nodes {
		fmt.Fprintf(&b, "%s  [%s]\n", n.Ref, nodeState(n))
		for _, e := range v.Edges {
			if e.From == n.ID {
				to := byID[e.To]
				fmt.Fprintf(&b, "    -> %-18s %s\n", e.Kind, to.Ref)
			}
		}
	}
	if v.Omitted > 0 {
		fmt.Fprintf(&b, "(%s more not shown)\n", plural(v.Omitted, "object", "objects"))
	}
	return b.String()
}

// MermaidSection renders v for a PR comment: a folded <details> section
// whose summary counts the objects drawn, and says how many were left out
// and where the full graph is (link, in markdown; empty names
// `snapply graph`), around a ```mermaid block that GitHub draws. It ends
// with a blank line.
func MermaidSection(v *graph.View, link string) string {
	var b strings.Builder
	b.WriteString("<details><summary>Graph: " + plural(len(v.Nodes), "object", "objects") + " changed or next to a change")
	if v.Omitted > 0 {
		if link == "" {
			link = "run `snapply graph` for the full graph"
		}
		fmt.Fprintf(&b, "; %d more not shown (%s)", v.Omitted, link)
	}
	b.WriteString("</summary>\n\n```mermaid\n")
	b.WriteString(Mermaid(v))
	b.WriteString("```\n\n</details>\n\n")
	return b.String()
}
