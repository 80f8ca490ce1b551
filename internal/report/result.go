package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

// The words of apply reports.
const (
	// completeLine ends the report of an apply that reached the desired state.
	completeLine = "Apply complete: the cluster matches the desired state."
	// replannedNote explains Record.Replanned.
	replannedNote = "replanned: the object changed in the cluster after the snapshot; it was planned again, then applied"
	// defaultResultTitle is the heading of a result in markdown when
	// MarkdownOptions.Title is empty.
	defaultResultTitle = "snapply apply"
	// resultDetailsHead introduces the plan's details in markdown.
	resultDetailsHead = "### Planned changes\n\n"
	// resultTableHead starts the markdown table of the objects that are
	// not unchanged.
	resultTableHead = "| outcome | object | readiness | source | error |\n| --- | --- | --- | --- | --- |\n"
)

// DefaultResultMarkdownOptions returns the options of a PR comment on an
// apply: the title "snapply apply", no marker or size limit, details folded.
func DefaultResultMarkdownOptions() MarkdownOptions {
	return MarkdownOptions{Title: defaultResultTitle, Details: true}
}

// checkResult rejects a result a report cannot render.
func checkResult(r *apply.Result) error {
	switch {
	case r == nil:
		return errors.New("nil apply result")
	case r.Plan == nil:
		return errors.New("apply result without a plan")
	}
	return nil
}

// ResultText writes the outcome of an apply as terminal text: a header line
// with the counts and the duration, one line per object that is not
// unchanged (symbol, ref, outcome, readiness, source) with the error or the
// conflicting fields and the ways out indented below it, and a closing line
// that says whether the cluster matches the desired state. Colours follow
// Text; opts.ShowUnchanged lists the unchanged objects too, and
// opts.MaxDiffLines is unused (the report holds no diffs).
func ResultText(w io.Writer, r *apply.Result, opts TextOptions) error {
	if err := checkResult(r); err != nil {
		return fmt.Errorf("text report: %w", err)
	}
	t := textWriter{color: opts.Color}
	t.buf.WriteString(resultHeader(r) + "\n")
	changes := changesByKey(r.Plan)
	first := true
	for _, rec := range r.Records {
		if rec.Outcome == apply.Unchanged {
			continue
		}
		if first {
			t.buf.WriteByte('\n')
			first = false
		}
		t.record(rec, changes[rec.Ref.Key()])
	}
	if opts.ShowUnchanged && r.Summary.Unchanged > 0 {
		t.buf.WriteString("\nUnchanged:\n")
		for _, rec := range r.Records {
			if rec.Outcome == apply.Unchanged {
				line := clean(rec.Ref.String())
				if src := rec.Source.String(); src != "" {
					line += "  " + clean(src)
				}
				t.buf.WriteString("  " + line + "\n")
			}
		}
	}
	code := ansiBoldRed
	if r.OK() {
		code = ansiGreen
	}
	t.buf.WriteString("\n" + t.paint(code, closingLine(r)) + "\n")
	if _, err := w.Write(t.buf.Bytes()); err != nil {
		return fmt.Errorf("text report: %w", err)
	}
	return nil
}

// resultHeader returns the counts line of a result:
// "Apply: 3 applied, 40 unchanged, 1 pruned, 1 failed, 2 not attempted, 1 not ready (12.3s)".
func resultHeader(r *apply.Result) string {
	s := r.Summary
	line := fmt.Sprintf("Apply: %d applied, %d unchanged, %d pruned, %d failed, %d not attempted",
		s.Applied, s.Unchanged, s.Pruned, s.Failed, s.NotAttempted)
	if s.NotReady > 0 {
		line += fmt.Sprintf(", %d not ready", s.NotReady)
	}
	return line + " (" + durationText(r.Duration) + ")"
}

// closingLine returns the line that ends a report of r: complete, failed,
// or interrupted.
func closingLine(r *apply.Result) string {
	parts := failureParts(r.Summary)
	switch {
	case r.Interrupted:
		line := "Interrupted: the apply stopped before it finished"
		if len(parts) > 0 {
			line += "; " + strings.Join(parts, ", ")
		}
		return line + ". What was applied stays applied; run apply again to finish."
	case !r.OK():
		return "Apply FAILED: " + strings.Join(parts, ", ") + ". What was applied stays applied; fix the cause and run apply again."
	}
	return completeLine
}

// failureParts lists the nonzero counts that keep a result from being OK:
// "1 failed", "2 not attempted", "1 not ready".
func failureParts(s apply.Summary) []string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{s.Failed, "failed"}, {s.NotAttempted, "not attempted"}, {s.NotReady, "not ready"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	return parts
}

// durationText prints d the way people read it: tenths of a second from one
// second up ("12.3s", "2m3.5s"), milliseconds below.
func durationText(d time.Duration) string {
	switch {
	case d >= time.Second:
		d = d.Round(100 * time.Millisecond)
	case d >= time.Millisecond:
		d = d.Round(time.Millisecond)
	}
	return d.String()
}

// changesByKey indexes the changes of p by object identity.
func changesByKey(p *plan.Plan) map[object.Key]plan.Change {
	m := make(map[object.Key]plan.Change, len(p.Changes))
	for _, c := range p.Changes {
		m[c.Ref.Key()] = c
	}
	return m
}

// outcomeText names an outcome for people: "not attempted" rather than the
// JSON's "not-attempted".
func outcomeText(o apply.Outcome) string {
	if o == apply.NotAttempted {
		return "not attempted"
	}
	return string(o)
}

// isProblem reports whether an outcome keeps the apply from succeeding.
func isProblem(o apply.Outcome) bool {
	return o == apply.Failed || o == apply.NotAttempted
}

// recordSymbol returns the one-character mark of a record in text reports.
func recordSymbol(rec apply.Record) string {
	switch rec.Outcome {
	case apply.Applied:
		if rec.Action == plan.Update {
			return symbol(plan.Update)
		}
		return symbol(plan.Create)
	case apply.Pruned:
		return symbol(plan.Delete)
	case apply.Failed, apply.NotAttempted:
		return "!"
	}
	return " "
}

// recordColor returns the colour of a record's symbol and ref: the colour
// of its action in a plan when it succeeded, bold red when it did not.
func recordColor(rec apply.Record) string {
	switch rec.Outcome {
	case apply.Applied:
		if rec.Action == plan.Update {
			return actionColor(plan.Update)
		}
		return actionColor(plan.Create)
	case apply.Pruned:
		return actionColor(plan.Delete)
	case apply.Failed, apply.NotAttempted:
		return ansiBoldRed
	}
	return ""
}

// readinessText prints a record's readiness: "Current", or the status and
// kstatus's message, "InProgress: Available: 2/3". It is "" when the
// object was not waited for.
func readinessText(rec apply.Record) string {
	if rec.Readiness == "" {
		return ""
	}
	if rec.ReadinessMessage == "" || rec.Readiness == apply.StatusCurrent {
		return string(rec.Readiness)
	}
	return string(rec.Readiness) + ": " + rec.ReadinessMessage
}

// readinessColor returns the colour of a readiness: green when Current,
// yellow while in progress, bold red otherwise.
func readinessColor(s apply.Status) string {
	switch s {
	case apply.StatusCurrent:
		return ansiGreen
	case apply.StatusInProgress:
		return ansiYellow
	}
	return ansiBoldRed
}

// isConflictNotApplied reports whether rec was not applied because the plan
// found conflicting fields: its error then repeats the plan's conflicts,
// which reports show as fields and ways out instead.
func isConflictNotApplied(rec apply.Record, c plan.Change) bool {
	return rec.Outcome == apply.NotAttempted && c.Action == plan.Conflict && len(c.Conflicts) > 0
}

// record writes the line of one object and what explains it.
func (t *textWriter) record(rec apply.Record, c plan.Change) {
	var b strings.Builder
	b.WriteString(t.paint(recordColor(rec), recordSymbol(rec)+" "+clean(rec.Ref.String())))
	b.WriteString(" (" + outcomeText(rec.Outcome))
	if rd := readinessText(rec); rd != "" {
		b.WriteString(", " + t.paint(readinessColor(rec.Readiness), clean(oneLine(rd))))
	}
	b.WriteString(")")
	if src := rec.Source.String(); src != "" {
		b.WriteString("  " + clean(src))
	}
	t.buf.WriteString(b.String() + "\n")

	if rec.Replanned {
		t.line(replannedNote)
	}
	conflict := isConflictNotApplied(rec, c)
	// The error of a plan conflict is the plan's conflicts in one line;
	// show the fields and the ways out instead, unless it says more.
	if rec.Error != "" && !(conflict && strings.HasPrefix(rec.Error, "conflict:")) {
		t.lines(clean(rec.Error))
	}
	if conflict {
		t.line("conflict: fields owned by other field managers:")
		t.conflicts(c.Conflicts)
	}
}

// conflicts writes conflicting fields aligned, then the two ways out.
func (t *textWriter) conflicts(cs []plan.FieldConflict) {
	width := 0
	for _, fc := range cs {
		width = max(width, len(clean(fc.Field)))
	}
	for _, fc := range cs {
		t.line(fmt.Sprintf("  %-*s  owned by %s", width, clean(fc.Field), clean(fc.Manager)))
	}
	ways := waysOut(plain)
	t.line("Two ways out:")
	t.line("  - " + ways[0] + ", or")
	t.line("  - " + ways[1] + ".")
}

// ResultMarkdown writes the outcome of an apply as GitHub-flavoured
// markdown for a PR comment or a job summary: the marker, the title (empty
// means "snapply apply"), a table of counts, the duration and the closing
// line, a table of the objects that are not unchanged (outcome, object,
// readiness, source, error), and below it the plan's details (diffs,
// conflicts and their ways out, images, warnings) as Markdown shows them.
// With opts.MaxBytes set, the output is at most that many bytes: diffs are
// left out from the last object up, then whole details, then rows of the
// objects table.
func ResultMarkdown(w io.Writer, r *apply.Result, opts MarkdownOptions) error {
	if err := checkResult(r); err != nil {
		return fmt.Errorf("markdown report: %w", err)
	}
	return writeFitted(w, newResultDoc(r, opts), opts.MaxBytes)
}

// resultDoc holds the rendered pieces of a markdown result, so that a size
// limit can be met by choosing pieces without rendering twice.
type resultDoc struct {
	head    string     // marker, title, counts and status lines
	tbl     mdTable    // the objects table
	details []mdDetail // the plan's details, one per changed object
}

// newResultDoc renders the pieces of r.
func newResultDoc(r *apply.Result, opts MarkdownOptions) *resultDoc {
	title := clean(oneLine(strings.TrimSpace(opts.Title)))
	if title == "" {
		title = defaultResultTitle
	}
	var head strings.Builder
	if marker := strings.TrimSpace(opts.Marker); marker != "" {
		head.WriteString(marker + "\n")
	}
	head.WriteString("## " + title + "\n\n")
	head.WriteString(headerLine(opts.Header))
	head.WriteString(mdResultSummary(r))

	d := &resultDoc{head: head.String(), tbl: newMDTable(resultTableHead, 5)}
	changes := changesByKey(r.Plan)
	for _, rec := range r.Records {
		if rec.Outcome == apply.Unchanged {
			continue
		}
		row := mdRecordRow(rec, changes[rec.Ref.Key()])
		d.tbl.add(row)
	}
	for _, c := range r.Plan.Changes {
		if c.Action != plan.Unchanged {
			d.details = append(d.details, mdChangeDetail(c, MarkdownOptions{Details: opts.Details}))
		}
	}
	return d
}

// mdResultSummary renders the counts table and the status lines.
func mdResultSummary(r *apply.Result) string {
	s := r.Summary
	var head, align, counts []string
	for _, col := range []struct {
		name   string
		n      int
		always bool
		bad    bool
	}{
		{"applied", s.Applied, true, false},
		{"unchanged", s.Unchanged, true, false},
		{"pruned", s.Pruned, false, false},
		{"failed", s.Failed, false, true},
		{"not attempted", s.NotAttempted, false, true},
		{"not ready", s.NotReady, false, true},
	} {
		if col.n == 0 && !col.always {
			continue
		}
		name := col.name
		if col.bad {
			name = "**" + name + "**"
		}
		head = append(head, name)
		align = append(align, "---:")
		counts = append(counts, fmt.Sprint(col.n))
	}
	var b strings.Builder
	for _, cells := range [][]string{head, align, counts} {
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\nTook " + durationText(r.Duration))
	if r.Plan.Snapshot != "" {
		b.WriteString("; planned against snapshot " + mdCode(r.Plan.Snapshot))
	}
	b.WriteString(".\n\n")
	if r.OK() {
		b.WriteString(completeLine + "\n\n")
	} else {
		b.WriteString("**" + mdText(closingLine(r)) + "**\n\n")
	}
	return b.String()
}

// mdRecordRow renders the row of one object in the objects table.
func mdRecordRow(rec apply.Record, c plan.Change) string {
	outcome := outcomeText(rec.Outcome)
	if rec.Replanned {
		outcome += " (replanned)"
	}
	if isProblem(rec.Outcome) {
		outcome = "**" + outcome + "**"
	}
	var readiness string
	if rec.Readiness != "" {
		readiness = mdText(string(rec.Readiness))
		if rec.Readiness != apply.StatusCurrent {
			readiness = "**" + readiness + "**"
			if rec.ReadinessMessage != "" {
				readiness += ": " + mdText(truncate(oneLine(rec.ReadinessMessage), maxNoteRunes))
			}
		}
	}
	var note string
	if isConflictNotApplied(rec, c) && strings.HasPrefix(rec.Error, "conflict:") {
		var managers []string
		for _, fc := range c.Conflicts {
			if m := mdCode(fc.Manager); !slices.Contains(managers, m) {
				managers = append(managers, m)
			}
		}
		note = "conflict: " + plural(len(c.Conflicts), "field", "fields") + " owned by " + strings.Join(managers, ", ")
	} else if rec.Error != "" {
		note = mdText(truncate(oneLine(rec.Error), maxNoteRunes))
	}
	return "| " + outcome + " | " + mdCode(rec.Ref.String()) + " | " + readiness + " | " + mdCode(rec.Source.String()) + " | " + note + " |\n"
}

// detailsHeadLen returns the length of the heading over the details.
func (d *resultDoc) detailsHeadLen() int {
	if len(d.details) == 0 {
		return 0
	}
	return len(resultDetailsHead)
}

// whole renders the report with nothing left out.
func (d *resultDoc) whole() string {
	return d.render(len(d.tbl.rows), make([]tier, len(d.details)), 0)
}

// render assembles a report: the head, k rows of the table, the details at
// their tiers, and a note on the details dropped.
func (d *resultDoc) render(k int, tiers []tier, dropped int) string {
	var b strings.Builder
	b.WriteString(d.head)
	b.WriteString(d.tbl.render(k))
	if len(d.details) > 0 {
		b.WriteString(resultDetailsHead)
	}
	for i, t := range tiers {
		b.WriteString(d.details[i].text(t))
	}
	b.WriteString(droppedNote(dropped))
	return finish(b.String())
}

// fit renders the report in at most maxBytes bytes (see fitParts).
func (d *resultDoc) fit(maxBytes int) (string, error) {
	k, tiers, dropped, err := fitParts(len(d.head)+d.detailsHeadLen(), d.tbl, d.details, maxBytes)
	if err != nil {
		return "", err
	}
	return d.render(k, tiers, dropped), nil
}

// ResultJSON writes r as indented JSON with a stable contract:
//
//	{"plan": <the plan, exactly as JSON writes it>,
//	 "summary": {"applied": N, "unchanged": N, "pruned": N, "failed": N,
//	             "notAttempted": N, "notReady": N},
//	 "records": [{"ref": {"group", "version", "kind", "namespace", "name"},
//	              "source": {"file", "line"}, "action": "...",
//	              "outcome": "applied|unchanged|pruned|failed|not-attempted",
//	              "error": "...", "wave": "...", "readiness": "...",
//	              "readinessMessage": "...", "replanned": false,
//	              "durationMs": N}],
//	 "interrupted": false, "duration": "12.3s", "ok": true}
//
// Every key is always present, empty lists are [] and never null, and
// records lists every object of the plan, unchanged ones included, in plan
// order. readiness is "" for an object that was not waited for. Later
// versions may add keys; they never remove or retype one.
func ResultJSON(w io.Writer, r *apply.Result) error {
	if err := checkResult(r); err != nil {
		return fmt.Errorf("json report: %w", err)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(toJSONResult(r)); err != nil {
		return fmt.Errorf("json report: %w", err)
	}
	return nil
}

// The JSON contract of a result, spelled out like that of a plan.
type (
	jsonResult struct {
		Plan        jsonPlan          `json:"plan"`
		Summary     jsonResultSummary `json:"summary"`
		Records     []jsonRecord      `json:"records"`
		Interrupted bool              `json:"interrupted"`
		Duration    string            `json:"duration"`
		OK          bool              `json:"ok"`
	}
	jsonResultSummary struct {
		Applied      int `json:"applied"`
		Unchanged    int `json:"unchanged"`
		Pruned       int `json:"pruned"`
		Failed       int `json:"failed"`
		NotAttempted int `json:"notAttempted"`
		NotReady     int `json:"notReady"`
	}
	jsonRecord struct {
		Ref              jsonRef    `json:"ref"`
		Source           jsonSource `json:"source"`
		Action           string     `json:"action"`
		Outcome          string     `json:"outcome"`
		Error            string     `json:"error"`
		Wave             string     `json:"wave"`
		Readiness        string     `json:"readiness"`
		ReadinessMessage string     `json:"readinessMessage"`
		Replanned        bool       `json:"replanned"`
		DurationMs       int64      `json:"durationMs"`
	}
)

// toJSONResult converts r to its JSON contract.
func toJSONResult(r *apply.Result) jsonResult {
	s := r.Summary
	out := jsonResult{
		Plan: toJSONPlan(r.Plan),
		Summary: jsonResultSummary{
			Applied: s.Applied, Unchanged: s.Unchanged, Pruned: s.Pruned,
			Failed: s.Failed, NotAttempted: s.NotAttempted, NotReady: s.NotReady,
		},
		Records:     make([]jsonRecord, 0, len(r.Records)),
		Interrupted: r.Interrupted,
		Duration:    durationText(r.Duration),
		OK:          r.OK(),
	}
	for _, rec := range r.Records {
		out.Records = append(out.Records, jsonRecord{
			Ref: jsonRef{
				Group: rec.Ref.Group, Version: rec.Ref.Version, Kind: rec.Ref.Kind,
				Namespace: rec.Ref.Namespace, Name: rec.Ref.Name,
			},
			Source:           jsonSourceOf(rec.Source),
			Action:           string(rec.Action),
			Outcome:          string(rec.Outcome),
			Error:            rec.Error,
			Wave:             rec.Wave,
			Readiness:        string(rec.Readiness),
			ReadinessMessage: rec.ReadinessMessage,
			Replanned:        rec.Replanned,
			DurationMs:       rec.Duration.Milliseconds(),
		})
	}
	return out
}
