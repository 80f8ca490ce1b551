package report

import (
	"fmt"
	"strings"
)

// mdTable is a markdown table that can be cut to its first k rows, ending
// then with an "... and N more" row, and that knows its length for each k
// without rendering it (the size limits try many k).
type mdTable struct {
	head   string   // header and separator lines
	cols   int      // columns, for the "more" row
	rows   []string // each ending with "\n"
	rowSum []int    // rowSum[k] is the length of rows[:k]
}

func newMDTable(head string, cols int) mdTable {
	return mdTable{head: head, cols: cols, rowSum: []int{0}}
}

// add appends a row.
func (t *mdTable) add(row string) {
	t.rows = append(t.rows, row)
	t.rowSum = append(t.rowSum, t.rowSum[len(t.rowSum)-1]+len(row))
}

// more ends a table that shows only some rows.
func (t *mdTable) more(n int) string {
	return fmt.Sprintf("| | ... and %d more |%s\n", n, strings.Repeat(" |", t.cols-2))
}

// len returns the length of the table showing k rows.
func (t *mdTable) len(k int) int {
	if len(t.rows) == 0 {
		return 0
	}
	n := len(t.head) + t.rowSum[k] + 1
	if k < len(t.rows) {
		n += len(t.more(len(t.rows) - k))
	}
	return n
}

// render returns the table showing k rows.
func (t *mdTable) render(k int) string {
	if len(t.rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(t.head)
	for _, r := range t.rows[:k] {
		b.WriteString(r)
	}
	if k < len(t.rows) {
		b.WriteString(t.more(len(t.rows) - k))
	}
	b.WriteString("\n")
	return b.String()
}
