package report

import (
	"fmt"
	"sort"

	"github.com/snapply/snapply/internal/graph"
)

// The sizes of the SVG drawing, in user units.
const (
	svgNodeW   = 230
	svgNodeH   = 42
	svgColGap  = 90
	svgRowGap  = 14
	svgMargin  = 20
	svgGridCol = 6 // columns of the grid of objects without edges
)

// svgGraph is a view laid out for SVG: a layered drawing of the objects
// with edges, from referrers on the left to what they refer to on the
// right, and a grid of the objects without edges below it.
type svgGraph struct {
	Width, Height int
	Nodes         []svgNode
	Edges         []svgEdge
	Omitted       int
}

// svgNode is a node at its place.
type svgNode struct {
	ID, Class, Title, Line1, Line2 string
	Kind, Namespace, Action, Risk  string
	X, Y, W, H                     int
}

// svgEdge is an edge as a path, with its kind.
type svgEdge struct {
	Path, Kind string
}

// layoutSVG lays v out: a rank per node (the longest path of edges that
// leads to it), nodes of a rank in a column, ordered by the mean row of
// their neighbours in the column before; isolated nodes in a grid below.
func layoutSVG(v *graph.View) *svgGraph {
	if v == nil || len(v.Nodes) == 0 {
		return nil
	}
	out := &svgGraph{Omitted: v.Omitted}
	idx := map[string]int{}
	for i, n := range v.Nodes {
		idx[n.ID] = i
	}
	in := make([][]int, len(v.Nodes))
	outE := make([][]int, len(v.Nodes))
	for _, e := range v.Edges {
		f, t := idx[e.From], idx[e.To]
		if f == t {
			continue
		}
		outE[f] = append(outE[f], t)
		in[t] = append(in[t], f)
	}
	rank := ranks(in, outE)
	var cols [][]int
	var isolated []int
	for i := range v.Nodes {
		if len(in[i]) == 0 && len(outE[i]) == 0 {
			isolated = append(isolated, i)
			continue
		}
		for len(cols) <= rank[i] {
			cols = append(cols, nil)
		}
		cols[rank[i]] = append(cols[rank[i]], i)
	}
	row := map[int]float64{}
	for c, col := range cols {
		if c > 0 {
			bary := map[int]float64{}
			for _, n := range col {
				sum, k := 0.0, 0
				for _, p := range in[n] {
					if r, ok := row[p]; ok {
						sum, k = sum+r, k+1
					}
				}
				if k > 0 {
					bary[n] = sum / float64(k)
				} else {
					bary[n] = 1e9
				}
			}
			sort.SliceStable(col, func(a, b int) bool { return bary[col[a]] < bary[col[b]] })
		}
		for r, n := range col {
			row[n] = float64(r)
		}
	}
	pos := make([][2]int, len(v.Nodes))
	height := 0
	for c, col := range cols {
		for r, n := range col {
			pos[n] = [2]int{svgMargin + c*(svgNodeW+svgColGap), svgMargin + r*(svgNodeH+svgRowGap)}
			height = max(height, pos[n][1]+svgNodeH)
		}
	}
	width := svgMargin + len(cols)*(svgNodeW+svgColGap)
	top := height + 2*svgMargin
	if len(cols) == 0 {
		top = svgMargin
	}
	for i, n := range isolated {
		pos[n] = [2]int{svgMargin + (i%svgGridCol)*(svgNodeW+svgRowGap), top + (i/svgGridCol)*(svgNodeH+svgRowGap)}
		height = max(height, pos[n][1]+svgNodeH)
		width = max(width, pos[n][0]+svgNodeW)
	}
	out.Width, out.Height = width+svgMargin, height+svgMargin
	for i, n := range v.Nodes {
		risk := ""
		if n.Risk {
			risk = "risk"
		}
		ns := n.Ref.Namespace
		line2 := n.Ref.Kind + " · " + nodeState(n)
		if ns != "" {
			line2 = ns + " · " + line2
		}
		out.Nodes = append(out.Nodes, svgNode{
			ID: n.ID, Class: "node s-" + nodeClass(n), Title: nodeCaption(n),
			Line1: ellipsis(n.Ref.Name, 30), Line2: ellipsis(line2, 38),
			Kind: n.Ref.Kind, Namespace: ns, Action: n.State, Risk: risk,
			X: pos[i][0], Y: pos[i][1], W: svgNodeW, H: svgNodeH,
		})
	}
	for _, e := range v.Edges {
		f, t := pos[idx[e.From]], pos[idx[e.To]]
		x1, y1 := f[0]+svgNodeW, f[1]+svgNodeH/2
		x2, y2 := t[0], t[1]+svgNodeH/2
		if x2 <= x1 { // backwards (a cycle): leave from the left side
			x1 = f[0]
			x2 = t[0] + svgNodeW
		}
		mid := (x1 + x2) / 2
		out.Edges = append(out.Edges, svgEdge{
			Path: fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x1, y1, mid, y1, mid, y2, x2, y2),
			Kind: string(e.Kind),
		})
	}
	return out
}

// ranks gives every node the length of the longest path of edges that
// leads to it; an edge that closes a cycle is ignored.
func ranks(in, out [][]int) []int {
	rank := make([]int, len(in))
	state := make([]int, len(in)) // 0 new, 1 on the stack, 2 done
	var visit func(n int)
	visit = func(n int) {
		state[n] = 1
		for _, p := range in[n] {
			if state[p] == 0 {
				visit(p)
			}
			if state[p] == 2 {
				rank[n] = max(rank[n], rank[p]+1)
			}
		}
		state[n] = 2
	}
	for n := range in {
		if state[n] == 0 {
			visit(n)
		}
	}
	return rank
}

// ellipsis cuts s to n runes, ending with "…" when cut.
func ellipsis(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
