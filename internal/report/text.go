package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/snapply/snapply/internal/plan"
)

// TextOptions controls Text.
type TextOptions struct {
	// Color adds ANSI colours. When false the output holds no escape
	// codes at all.
	Color bool
	// ShowUnchanged lists unchanged objects; when false they are only
	// counted in the header.
	ShowUnchanged bool
	// MaxDiffLines cuts each diff after this many lines; 0 means no limit.
	MaxDiffLines int
	// Diff chooses the field diff, the unified diff or both for updates;
	// empty means DiffStructural.
	Diff DiffMode
}

// DefaultTextOptions returns the options for a terminal that is not known
// to support colours: no colour, unchanged objects counted only, whole diffs.
func DefaultTextOptions() TextOptions {
	return TextOptions{}
}

// ANSI escape codes used when TextOptions.Color is set.
const (
	ansiReset   = "\x1b[0m"
	ansiBold    = "\x1b[1m"
	ansiRed     = "\x1b[31m"
	ansiGreen   = "\x1b[32m"
	ansiYellow  = "\x1b[33m"
	ansiCyan    = "\x1b[36m"
	ansiBoldRed = "\x1b[1;31m"
)

// textIndent prefixes every line under an object's header line.
const textIndent = "    "

// Text writes p as compact terminal text, like `terraform plan`: a header
// line with the counts, one block per object that is not unchanged (its
// symbol, ref, source, message, conflicts, images, warnings and indented
// diff), and a final line saying whether anything changes.
func Text(w io.Writer, p *plan.Plan, opts TextOptions) error {
	if p == nil {
		return errors.New("text report: nil plan")
	}
	t := textWriter{color: opts.Color}
	t.header(p)
	for _, c := range p.Changes {
		if c.Action == plan.Unchanged && len(c.Policy) == 0 {
			continue
		}
		t.buf.WriteByte('\n')
		t.change(c, opts)
	}
	t.images(p.Images, opts.ShowUnchanged)
	if opts.ShowUnchanged && p.Summary.Unchanged > 0 {
		t.buf.WriteString("\nUnchanged:\n")
		for _, c := range p.Changes {
			if c.Action == plan.Unchanged {
				t.buf.WriteString("  " + t.refLine(c) + "\n")
			}
		}
	}
	if blocked := blockedLine(p.Summary); blocked != "" {
		t.buf.WriteString("\n" + t.paint(ansiBoldRed, blocked) + "\n")
	} else if !p.HasChanges() {
		t.buf.WriteString("\n" + noChangesLine + "\n")
	}
	if blocked := policyBlockedLine(p); blocked != "" {
		t.buf.WriteString("\n" + t.paint(ansiBoldRed, blocked) + "\n")
	}
	if _, err := w.Write(t.buf.Bytes()); err != nil {
		return fmt.Errorf("text report: %w", err)
	}
	return nil
}

// textWriter accumulates a text report.
type textWriter struct {
	buf   bytes.Buffer
	color bool
}

// paint wraps s in an ANSI colour when colours are on.
func (t *textWriter) paint(code, s string) string {
	if !t.color || s == "" {
		return s
	}
	return code + s + ansiReset
}

// header writes the counts line.
func (t *textWriter) header(p *plan.Plan) {
	s := p.Summary
	fmt.Fprintf(&t.buf, "Plan: %d to create, %d to update, %d to delete, %s, %d invalid, %d pending, %d unchanged",
		s.Create, s.Update, s.Delete, plural(s.Conflict, "conflict", "conflicts"), s.Invalid, s.Pending, s.Unchanged)
	if v := verificationLine(p); v != "" {
		t.buf.WriteString("; " + v)
	}
	if p.Snapshot != "" {
		fmt.Fprintf(&t.buf, " (snapshot %s)", clean(p.Snapshot))
	}
	if risks := riskCounts(p); risks != "" {
		t.buf.WriteString(" | risks: " + t.paint(ansiBoldRed, risks))
	}
	if counts := policyCounts(p); counts != "" {
		t.buf.WriteString("; policy: " + counts)
	}
	t.buf.WriteByte('\n')
}

// actionColor returns the colour of an action's header line.
func actionColor(a plan.Action) string {
	switch a {
	case plan.Create:
		return ansiGreen
	case plan.Update:
		return ansiYellow
	case plan.Delete:
		return ansiRed
	case plan.Conflict, plan.Invalid:
		return ansiBoldRed
	case plan.Pending:
		return ansiCyan
	}
	return ""
}

// refLine prints "ref  file:line".
func (t *textWriter) refLine(c plan.Change) string {
	line := clean(c.Ref.String())
	if src := c.Source.String(); src != "" {
		line += "  " + clean(src)
	}
	return line
}

// change writes the block of one object.
func (t *textWriter) change(c plan.Change, opts TextOptions) {
	head := symbol(c.Action) + " " + clean(c.Ref.String()) + " (" + string(c.Action) + ")"
	t.buf.WriteString(t.paint(actionColor(c.Action), head))
	if c.Destructive {
		t.buf.WriteString(" " + t.paint(ansiBoldRed, "DESTRUCTIVE"))
	}
	if src := c.Source.String(); src != "" {
		t.buf.WriteString("  " + clean(src))
	}
	t.buf.WriteByte('\n')

	if c.Destructive {
		t.line(t.paint(ansiBoldRed, "DESTRUCTIVE: "+destructiveNote(c.Ref)))
	}
	// A conflict's message is the two ways out, which follow the fields.
	if c.Message != "" && (c.Action != plan.Conflict || len(c.Conflicts) == 0) {
		t.lines(clean(c.Message))
	}
	if len(c.Conflicts) > 0 {
		width := 0
		for _, fc := range c.Conflicts {
			width = max(width, len(clean(fc.Field)))
		}
		for _, fc := range c.Conflicts {
			t.line(fmt.Sprintf("%-*s  owned by %s", width, clean(fc.Field), clean(fc.Manager)))
		}
		ways := waysOut(plain)
		t.line("Two ways out:")
		t.line("  - " + ways[0] + ", or")
		t.line("  - " + ways[1] + ".")
	}
	// The server's message (why it refuses the object) comes first, then
	// the risks.
	for _, r := range c.Risks {
		t.lines(t.paint(ansiBoldRed, "risk "+string(r.Kind)+":") + " " + clean(r.Message))
	}
	for _, ic := range c.Images {
		t.line("image " + clean(imageText(ic, plain)))
	}
	if len(c.Risks) == 0 { // an analysed plan shows warnings as risks
		for _, warn := range c.Warnings {
			t.lines("warning: " + clean(warn))
		}
	}
	for _, r := range c.Policy {
		code := ansiYellow
		if r.Level == plan.PolicyDeny {
			code = ansiBoldRed
		}
		t.lines(t.paint(code, "policy "+string(r.Level)) + " " + clean(r.Rule) + ": " + clean(r.Message))
	}
	if opts.Diff.showFields(c) {
		t.diff(clean(strings.Join(fieldLines(c.Fields), "\n")), opts.MaxDiffLines)
	}
	if opts.Diff.showUnified(c) {
		t.diff(clean(c.Diff), opts.MaxDiffLines)
	}
}

// images writes the image inventory: every image that changes, and the
// unchanged ones when showUnchanged, else their count.
func (t *textWriter) images(images []plan.ImageUse, showUnchanged bool) {
	if len(images) == 0 {
		return
	}
	t.buf.WriteString("\nImages (" + imageCounts(images) + "):\n")
	for _, u := range images {
		if u.Status == plan.ImageUnchanged && !showUnchanged {
			continue
		}
		t.buf.WriteString("  " + clean(u.Ref.String()) + "  " + clean(u.Container) + ": " + clean(imageUseText(u, plain)) + " (" + string(u.Status) + ")\n")
	}
}

// line writes one indented line.
func (t *textWriter) line(s string) {
	t.buf.WriteString(textIndent + s + "\n")
}

// lines writes s indented, line by line.
func (t *textWriter) lines(s string) {
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		t.line(l)
	}
}

// diff writes a unified diff indented, coloured line by line, cut after
// maxLines lines when maxLines > 0.
func (t *textWriter) diff(d string, maxLines int) {
	lines := strings.Split(strings.TrimRight(d, "\n"), "\n")
	cut := 0
	if maxLines > 0 && len(lines) > maxLines {
		cut = len(lines) - maxLines
		lines = lines[:maxLines]
	}
	for _, l := range lines {
		if l == "" {
			t.buf.WriteByte('\n')
			continue
		}
		t.line(t.paint(diffColor(l), l))
	}
	if cut > 0 {
		t.line(fmt.Sprintf("... %s not shown", plural(cut, "more diff line", "more diff lines")))
	}
}

// diffColor returns the colour of one line of a unified diff.
func diffColor(l string) string {
	switch {
	case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		return ansiBold
	case strings.HasPrefix(l, "@@"):
		return ansiCyan
	case strings.HasPrefix(l, "~ "):
		return ansiYellow
	case strings.HasPrefix(l, "+"):
		return ansiGreen
	case strings.HasPrefix(l, "-"):
		return ansiRed
	}
	return ""
}
