package report

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/snapply/snapply/internal/graph"
	"github.com/snapply/snapply/internal/plan"
)

// MarkdownOptions controls Markdown and SplitMarkdown.
type MarkdownOptions struct {
	// Title is the heading, in markdown, like "snapply plan for `prod`".
	// Empty means "snapply plan".
	Title string
	// Marker is put first, on a line of its own, so that a comment can be
	// found again; a hidden HTML comment like "<!-- snapply:prod -->". It
	// may be empty.
	Marker string
	// MaxBytes is the largest output Markdown writes; 0 means no limit.
	// Over it, diffs are left out from the last object up, then whole
	// details, then rows of the changes table. SplitMarkdown ignores it.
	MaxBytes int
	// Details folds each object's details inside <details>; when false they
	// follow a heading each.
	Details bool
	// Header, when set, is a line of markdown put under the title, like
	// the commit and run the report comes from. The caller builds it from
	// trusted parts (it is not escaped).
	Header string
	// Diff chooses the field diff, the unified diff or both for updates;
	// empty means DiffStructural.
	Diff DiffMode
	// Graph, when set, is drawn after the summary as a Mermaid flowchart
	// in a folded section (see MermaidSection). It counts against
	// MaxBytes: it is left out before any row of the changes table is.
	Graph *graph.View
	// GraphLink says in markdown where the full graph is, for when Graph
	// left objects out; empty says to run `snapply graph`.
	GraphLink string
}

// DefaultMarkdownOptions returns the options of a PR comment without a
// marker or size limit, details folded.
func DefaultMarkdownOptions() MarkdownOptions {
	return MarkdownOptions{Title: defaultTitle, Details: true}
}

// defaultTitle is the heading when MarkdownOptions.Title is empty.
const defaultTitle = "snapply plan"

// changesTableHead starts the table of changed objects.
const changesTableHead = "| action | object | source | note |\n| --- | --- | --- | --- |\n"

// maxNoteRunes is the longest note in a row of the changes table.
const maxNoteRunes = 200

// Markdown writes p as GitHub-flavoured markdown: the marker, the title,
// a table of counts, a table of the changed objects, and each changed
// object's details (diff, conflicts, server message, images, warnings).
// With opts.MaxBytes set, the output is at most that many bytes.
func Markdown(w io.Writer, p *plan.Plan, opts MarkdownOptions) error {
	if p == nil {
		return errors.New("markdown report: nil plan")
	}
	return writeFitted(w, newMarkdownDoc(p, opts), opts.MaxBytes)
}

// fittable is a markdown report that can be cut to a size.
type fittable interface {
	// whole renders the report with nothing left out.
	whole() string
	// fit renders it in at most maxBytes bytes.
	fit(maxBytes int) (string, error)
}

// writeFitted writes d whole, or fitted to maxBytes when it is larger and
// maxBytes is positive.
func writeFitted(w io.Writer, d fittable, maxBytes int) error {
	out := d.whole()
	if maxBytes > 0 && len(out) > maxBytes {
		var err error
		if out, err = d.fit(maxBytes); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(w, out); err != nil {
		return fmt.Errorf("markdown report: %w", err)
	}
	return nil
}

// tier says how much of an object's details a report shows.
type tier int

const (
	tierFull    tier = iota // everything
	tierNoDiff              // everything but the diff, which a note replaces
	tierMinimal             // a note in place of the details
	tierDropped             // nothing
)

// mdDetail is the details section of one changed object at each tier.
// Every form ends with a blank line.
type mdDetail struct {
	full, noDiff, minimal string
}

// text returns the detail at tier t.
func (d mdDetail) text(t tier) string {
	switch t {
	case tierFull:
		return d.full
	case tierNoDiff:
		return d.noDiff
	case tierMinimal:
		return d.minimal
	}
	return ""
}

// markdownDoc holds the rendered pieces of a markdown report, so that
// size limits can be met by choosing pieces without rendering twice.
type markdownDoc struct {
	marker  string
	title   string
	header  string     // opts.Header and a blank line, or empty
	summary string     // counts table and status lines, ending with a blank line
	graph   string     // the folded Mermaid graph and a blank line, or empty
	tbl     mdTable    // the changes table
	details []mdDetail // one per row, same order
}

// newMarkdownDoc renders the pieces of p.
func newMarkdownDoc(p *plan.Plan, opts MarkdownOptions) *markdownDoc {
	d := &markdownDoc{
		marker: strings.TrimSpace(opts.Marker),
		title:  clean(oneLine(strings.TrimSpace(opts.Title))),
		header: headerLine(opts.Header),
	}
	if d.title == "" {
		d.title = defaultTitle
	}
	d.summary = mdSummary(p)
	if opts.Graph != nil && len(opts.Graph.Nodes) > 0 {
		d.graph = MermaidSection(opts.Graph, opts.GraphLink)
	}
	d.tbl = newMDTable(changesTableHead, 4)
	for _, c := range p.Changes {
		if c.Action == plan.Unchanged && len(c.Policy) == 0 {
			continue
		}
		row := mdRow(c)
		d.tbl.add(row)
		d.details = append(d.details, mdChangeDetail(c, opts))
	}
	return d
}

// head returns the marker, the title with suffix appended, and the summary.
func (d *markdownDoc) head(suffix string) string {
	var b strings.Builder
	if d.marker != "" {
		b.WriteString(d.marker + "\n")
	}
	b.WriteString("## " + d.title + suffix + "\n\n")
	b.WriteString(d.header)
	b.WriteString(d.summary)
	b.WriteString(d.graph)
	return b.String()
}

// headerLine returns the header line and a blank line, or "".
func headerLine(h string) string {
	h = oneLine(strings.TrimSpace(h))
	if h == "" {
		return ""
	}
	return h + "\n\n"
}

// continuationHead starts every piece of a split report after the first.
func (d *markdownDoc) continuationHead(suffix string) string {
	var b strings.Builder
	if d.marker != "" {
		b.WriteString(d.marker + "\n")
	}
	b.WriteString("## " + d.title + suffix + "\n\n")
	return b.String()
}

// droppedNote says that the details of n objects were left out.
func droppedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("_Details of the remaining %s omitted: %s._\n\n", plural(n, "object", "objects"), omittedNote)
}

// whole renders the report with nothing left out.
func (d *markdownDoc) whole() string {
	return d.render("", len(d.tbl.rows), make([]tier, len(d.details)), 0)
}

// render assembles a report: the head, k rows of the table, the details at
// their tiers, and a note on the details dropped.
func (d *markdownDoc) render(suffix string, k int, tiers []tier, dropped int) string {
	var b strings.Builder
	b.WriteString(d.head(suffix))
	b.WriteString(d.tbl.render(k))
	for i, t := range tiers {
		b.WriteString(d.details[i].text(t))
	}
	b.WriteString(droppedNote(dropped))
	return finish(b.String())
}

// finish ends a report with exactly one newline.
func finish(s string) string {
	return strings.TrimRight(s, "\n") + "\n"
}

// fit renders the report in at most maxBytes bytes (see fitParts).
func (d *markdownDoc) fit(maxBytes int) (string, error) {
	k, tiers, dropped, err := fitParts(len(d.head("")), d.tbl, d.details, maxBytes)
	// The graph goes before rows of the changes table do.
	if (err != nil || k < len(d.tbl.rows)) && d.graph != "" {
		d.graph = ""
		k, tiers, dropped, err = fitParts(len(d.head("")), d.tbl, d.details, maxBytes)
	}
	if err != nil {
		return "", err
	}
	return d.render("", k, tiers, dropped), nil
}

// fitParts chooses what a report of fixed bytes of head, the table tbl and
// details keeps to fit in maxBytes: it leaves out diffs from the last object
// up, then whole details from the last object up, then rows of the table
// from the end. It returns the rows kept, the tier of every detail and the
// number of details dropped, or an error when even the head alone is too
// big. The sum of the pieces is at least the length of the report: every
// piece ends with a newline, and finish only trims a last blank line.
func fitParts(fixed int, tbl mdTable, details []mdDetail, maxBytes int) (k int, tiers []tier, dropped int, err error) {
	tiers = make([]tier, len(details))
	size := 0
	for _, det := range details {
		size += len(det.full)
	}
	k = len(tbl.rows)
	total := func() int { return fixed + tbl.len(k) + size + len(droppedNote(dropped)) }

	for i := len(tiers) - 1; i >= 0 && total() > maxBytes; i-- {
		size -= len(details[i].full) - len(details[i].noDiff)
		tiers[i] = tierNoDiff
	}
	for i := len(tiers) - 1; i >= 0 && total() > maxBytes; i-- {
		size -= len(details[i].text(tiers[i]))
		tiers[i] = tierDropped
		dropped++
	}
	for k > 0 && total() > maxBytes {
		k--
	}
	if total() > maxBytes {
		return 0, nil, 0, fmt.Errorf("markdown report: the summary alone takes %d bytes, more than the limit of %d", total(), maxBytes)
	}
	return k, tiers, dropped, nil
}

// mdSummary renders the counts table and the status lines.
func mdSummary(p *plan.Plan) string {
	var head, align, counts []string
	for _, a := range plan.Actions {
		n := p.Summary.Count(a)
		if n == 0 && a != plan.Unchanged {
			continue
		}
		name := string(a)
		if a.IsError() {
			name = "**" + name + "**"
		}
		head = append(head, name)
		align = append(align, "---:")
		counts = append(counts, fmt.Sprint(n))
	}
	var b strings.Builder
	for _, cells := range [][]string{head, align, counts} {
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
	if v := verificationLine(p); v != "" {
		b.WriteString("Checked: " + v + ".\n\n")
	}
	if p.Snapshot != "" {
		b.WriteString("Planned against snapshot " + mdCode(p.Snapshot) + ".\n\n")
	}
	if blocked := blockedLine(p.Summary); blocked != "" {
		b.WriteString("**" + blocked + "**\n\n")
	} else if !p.HasChanges() {
		b.WriteString(noChangesLine + "\n\n")
	}
	if counts := policyCounts(p); counts != "" {
		b.WriteString("Policy: " + counts + ".\n\n")
	}
	if blocked := policyBlockedLine(p); blocked != "" {
		b.WriteString("**" + blocked + "**\n\n")
	}
	b.WriteString(mdRisks(p))
	b.WriteString(mdImages(p.Images))
	return b.String()
}

// mdRow renders the row of one changed object in the changes table.
func mdRow(c plan.Change) string {
	action := label(c)
	if c.Action.IsError() || c.Destructive {
		action = "**" + action + "**"
	}
	return "| " + action + " | " + mdCode(c.Ref.String()) + " | " + mdCode(c.Source.String()) + " | " + mdNote(c) + " |\n"
}

// mdNote returns the short note on one changed object: what makes a delete
// destructive, who owns conflicting fields, an image change or the message.
func mdNote(c plan.Change) string {
	switch {
	case c.Destructive:
		return "**" + mdText(destructiveWhat(c.Ref)) + "**"
	case len(c.Policy) > 0:
		return mdPolicyNote(c)
	case len(c.Conflicts) > 0:
		var managers []string
		for _, fc := range c.Conflicts {
			if m := mdCode(fc.Manager); !slices.Contains(managers, m) {
				managers = append(managers, m)
			}
		}
		return plural(len(c.Conflicts), "field", "fields") + " owned by " + strings.Join(managers, ", ")
	case len(c.Images) > 0:
		note := "image " + imageText(c.Images[0], mdCode)
		if len(c.Images) > 1 {
			note += fmt.Sprintf(", and %d more", len(c.Images)-1)
		}
		return note
	case c.Message != "":
		return mdText(truncate(oneLine(c.Message), maxNoteRunes))
	}
	return ""
}

// mdChangeDetail renders the details section of one changed object.
func mdChangeDetail(c plan.Change, opts MarkdownOptions) mdDetail {
	fold := opts.Details
	title := c.Ref.String() + " (" + label(c) + ")"
	var open, end string
	if fold {
		open = "<details><summary>" + htmlText(title) + "</summary>\n\n"
		end = "</details>\n\n"
	} else {
		open = "#### " + mdText(title) + "\n\n"
	}

	var b strings.Builder
	if c.Destructive {
		b.WriteString("**DESTRUCTIVE: " + mdText(destructiveNote(c.Ref)) + ".**\n\n")
	}
	if len(c.Risks) > 0 {
		b.WriteString("Risks:\n\n")
		for _, r := range c.Risks {
			b.WriteString("- **" + string(r.Kind) + "**: " + mdText(oneLine(r.Message)) + "\n")
		}
		b.WriteString("\n")
	}
	if c.Action == plan.Invalid && c.Source.File != "" {
		b.WriteString("Source: " + mdCode(c.Source.String()) + "\n\n")
	}
	if c.Message != "" {
		switch c.Action {
		case plan.Invalid:
			b.WriteString("Rejected by the API server:\n\n" + mdFence("text", c.Message) + "\n")
		case plan.Conflict:
			// The field table and the two ways out below say it all.
		default:
			b.WriteString("Note: " + mdText(c.Message) + "\n\n")
		}
	}
	if len(c.Conflicts) > 0 {
		b.WriteString("Fields owned by other field managers:\n\n| field | manager |\n| --- | --- |\n")
		for _, fc := range c.Conflicts {
			b.WriteString("| " + mdCode(fc.Field) + " | " + mdCode(fc.Manager) + " |\n")
		}
		ways := waysOut(mdCode)
		b.WriteString("\nTwo ways out:\n\n- " + ways[0] + ", or\n- " + ways[1] + ".\n\n")
	}
	if len(c.Images) > 0 {
		b.WriteString("Images:\n\n")
		for _, ic := range c.Images {
			b.WriteString("- " + imageText(ic, mdCode) + "\n")
		}
		b.WriteString("\n")
	}
	if len(c.Warnings) > 0 && len(c.Risks) == 0 { // else shown as risks
		b.WriteString("Warnings:\n\n")
		for _, warn := range c.Warnings {
			b.WriteString("- " + mdText(warn) + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString(mdPolicyTable(c))
	var diff string
	if opts.Diff.showFields(c) {
		diff = mdFence("diff", strings.Join(fieldLines(c.Fields), "\n")+"\n") + "\n"
	}
	if opts.Diff.showUnified(c) {
		diff += mdFence("diff", c.Diff) + "\n"
	}
	if b.Len() == 0 && diff == "" {
		b.WriteString("_No diff._\n\n")
	}
	full := open + b.String() + diff + end
	noDiff := full
	if diff != "" {
		noDiff = open + b.String() + "_diff omitted: " + omittedNote + "_\n\n" + end
	}
	return mdDetail{
		full:    full,
		noDiff:  noDiff,
		minimal: open + "_details omitted: " + omittedNote + "_\n\n" + end,
	}
}

// maxRiskRows and maxImageRows bound the risk and image tables of a
// markdown plan; the JSON plan lists them all.
const (
	maxRiskRows  = 50
	maxImageRows = 100
)

// mdRisks renders the risks of p first, above the changes: a counts line
// and a table of every risk, or "" when there is none.
func mdRisks(p *plan.Plan) string {
	counts := riskCounts(p)
	if counts == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("**Risks: " + mdText(counts) + ".**\n\n| risk | object | what |\n| --- | --- | --- |\n")
	rows := 0
	for _, k := range plan.RiskKinds {
		for _, c := range p.Changes {
			for _, r := range c.Risks {
				if r.Kind != k {
					continue
				}
				rows++
				if rows <= maxRiskRows {
					b.WriteString("| **" + string(r.Kind) + "** | " + mdCode(c.Ref.String()) + " | " + mdText(truncate(oneLine(r.Message), maxNoteRunes)) + " |\n")
				}
			}
		}
	}
	if rows > maxRiskRows {
		fmt.Fprintf(&b, "\n_%d more %s in the details below and in the JSON plan._\n", rows-maxRiskRows, pluralWord(rows-maxRiskRows, "risk", "risks"))
	}
	b.WriteString("\n")
	return b.String()
}

// mdImages renders the image inventory in a collapsed section, the images
// that change first.
func mdImages(images []plan.ImageUse) string {
	if len(images) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<details><summary>Images (" + imageCounts(images) + ")</summary>\n\n| object | container | image | status |\n| --- | --- | --- | --- |\n")
	rows := 0
	for _, changed := range []bool{true, false} {
		for _, u := range images {
			if (u.Status != plan.ImageUnchanged) != changed {
				continue
			}
			rows++
			if rows <= maxImageRows {
				b.WriteString("| " + mdCode(u.Ref.String()) + " | " + mdCode(u.Container) + " | " + imageUseText(u, mdCode) + " | " + string(u.Status) + " |\n")
			}
		}
	}
	if rows > maxImageRows {
		fmt.Fprintf(&b, "\n_%d more %s in the JSON plan._\n", rows-maxImageRows, pluralWord(rows-maxImageRows, "image", "images"))
	}
	b.WriteString("\n</details>\n\n")
	return b.String()
}

// pluralWord returns one when n is 1, else many.
func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
