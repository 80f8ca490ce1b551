package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/snapply/snapply/internal/drift"
)

// DriftJSON writes r as indented JSON with a stable contract:
//
//	{"snapshot": "<id>", "inventory": "<namespace>/<name>",
//	 "summary": {"inSync": N, "drifted": N, "missing": N, "extra": N,
//	             "orphan": N, "invalid": N},
//	 "objects": [{"ref": {"group", "version", "kind", "namespace", "name"},
//	              "state": "drifted|missing|extra|orphan|invalid",
//	              "source": {"file", "line"},
//	              "fields": [{"path", "git", "live", "manager", "operation", "time"}],
//	              "ownership": [{"path", "manager", "operation", "time"}],
//	              "diff": "...", "adopt": "...", "message": "..."}]}
//
// Every key is always present, lists are [] and never null; objects lists
// only those not in sync. Later versions may add keys; they never remove
// or retype one.
func DriftJSON(w io.Writer, r *drift.Report) error {
	if r == nil {
		return errors.New("json report: nil drift report")
	}
	out := *r
	if out.Objects == nil {
		out.Objects = []drift.Object{}
	}
	for i := range out.Objects {
		o := &out.Objects[i]
		if o.Fields == nil {
			o.Fields = []drift.Field{}
		}
		if o.Ownership == nil {
			o.Ownership = []drift.Ownership{}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("json report: %w", err)
	}
	return nil
}

// driftCounts says "2 drifted, 1 missing, 12 in sync".
func driftCounts(s drift.Summary) string {
	var parts []string
	for _, st := range drift.States {
		if n := s.Count(st); n > 0 || st == drift.InSync {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ReplaceAll(string(st), "-", " ")))
		}
	}
	return strings.Join(parts, ", ")
}

// DriftLine says in one line whether the cluster matches git.
func DriftLine(r *drift.Report) string {
	if !r.HasDrift() {
		return "The cluster matches git."
	}
	return fmt.Sprintf("Drift: %s from git.", plural(r.Summary.Drifts(), "object differs", "objects differ"))
}

// FieldLine prints a drifted field as
// "spec.replicas: git 3, live 5 (kubectl-edit, 2026-11-20T14:02:05Z)".
func FieldLine(f drift.Field) string {
	s := fmt.Sprintf("%s: git %s, live %s", f.Path, f.Git, f.Live)
	if f.Manager != "" {
		who := f.Manager
		if f.Time != "" {
			who += ", " + f.Time
		}
		s += " (" + who + ")"
	}
	return s
}

// OwnershipLine prints a field taken by a force-apply.
func OwnershipLine(o drift.Ownership) string {
	s := fmt.Sprintf("%s: taken from snapply by %s with a force-apply", o.Path, o.Manager)
	if o.Time != "" {
		s += " (" + o.Time + ")"
	}
	return s
}

func driftSymbol(st drift.State) (string, string) {
	switch st {
	case drift.Missing:
		return "-", ansiRed
	case drift.Extra, drift.Orphan:
		return "+", ansiGreen
	case drift.Invalid:
		return "!", ansiBoldRed
	}
	return "~", ansiYellow
}

// adoptIntro heads the patch that adopts the live values in git.
const adoptIntro = "adopt the live values in git: paste into the manifest (or a kustomize patch)"

// DriftText writes r as terminal text: a header with the counts, one
// block per object that is not in sync (its fields with their managers,
// the fields taken by force, the patch that adopts the live values in
// git, the diff a re-apply makes), and a final line.
func DriftText(w io.Writer, r *drift.Report, opts TextOptions) error {
	if r == nil {
		return errors.New("text report: nil drift report")
	}
	paint := func(code, s string) string {
		if !opts.Color || code == "" || s == "" {
			return s
		}
		return code + s + ansiReset
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Drift of %s against git: %s\n", clean(r.Inventory), driftCounts(r.Summary))
	for _, o := range r.Objects {
		sym, code := driftSymbol(o.State)
		line := sym + " " + clean(o.Ref.String()) + " (" + string(o.State) + ")"
		if o.Source.File != "" {
			line += "  " + clean(o.Source.String())
		}
		b.WriteString("\n" + paint(code, line) + "\n")
		for _, f := range o.Fields {
			b.WriteString(diffIndent + clean(FieldLine(f)) + "\n")
		}
		for _, ow := range o.Ownership {
			b.WriteString(diffIndent + clean(OwnershipLine(ow)) + "\n")
		}
		if o.Message != "" {
			b.WriteString(diffIndent + clean(o.Message) + "\n")
		}
		if o.Adopt != "" {
			b.WriteString(diffIndent + adoptIntro + ":\n")
			for _, l := range strings.Split(strings.TrimRight(clean(o.Adopt), "\n"), "\n") {
				b.WriteString(diffIndent + "  " + l + "\n")
			}
			b.WriteString(diffIndent + "re-apply changes (live -> git):\n")
		}
		if o.State == drift.Drifted || o.State == drift.Missing {
			lines := strings.Split(strings.TrimRight(clean(o.Diff), "\n"), "\n")
			if opts.MaxDiffLines > 0 && len(lines) > opts.MaxDiffLines {
				lines = append(lines[:opts.MaxDiffLines], fmt.Sprintf("... %d more lines", len(lines)-opts.MaxDiffLines))
			}
			for _, l := range lines {
				if l != "" {
					b.WriteString(diffIndent + paint(diffColor(l), l) + "\n")
				}
			}
		}
	}
	b.WriteString("\n" + DriftLine(r) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// DriftMarkdownOptions controls DriftMarkdown.
type DriftMarkdownOptions struct {
	// Title is the heading; empty means "snapply drift".
	Title string
	// Header is markdown put under the title (the commit and run).
	Header string
	// MaxBytes bounds the output (a GitHub issue body takes 65,536
	// characters): diffs go first, then objects, with a note. 0: no limit.
	MaxBytes int
}

// DriftMarkdown writes r as markdown for an issue body or a job summary:
// the counts, a table of the objects not in sync, and per object its
// fields, with the manager and time of each live value, the patch that
// adopts the live values in git (YAML to paste), and in a collapsed block
// what a re-apply changes (the diff from live to git).
func DriftMarkdown(w io.Writer, r *drift.Report, opts DriftMarkdownOptions) error {
	if r == nil {
		return errors.New("markdown report: nil drift report")
	}
	full := driftMarkdown(r, opts, len(r.Objects), true)
	if opts.MaxBytes > 0 && len(full) > opts.MaxBytes {
		full = driftMarkdown(r, opts, len(r.Objects), false)
		for k := len(r.Objects) - 1; k >= 0 && len(full) > opts.MaxBytes; k-- {
			full = driftMarkdown(r, opts, k, false)
		}
		if len(full) > opts.MaxBytes {
			return fmt.Errorf("markdown report: the drift report does not fit in %d bytes", opts.MaxBytes)
		}
	}
	_, err := io.WriteString(w, full)
	return err
}

// driftMarkdown renders the first k objects in detail, with their diffs
// when diffs is set.
func driftMarkdown(r *drift.Report, opts DriftMarkdownOptions, k int, diffs bool) string {
	title := opts.Title
	if title == "" {
		title = "snapply drift"
	}
	var b strings.Builder
	b.WriteString("## " + title + "\n\n")
	if opts.Header != "" {
		b.WriteString(opts.Header + "\n\n")
	}
	fmt.Fprintf(&b, "**%s** Inventory %s: %s.\n", mdText(DriftLine(r)), mdCode(r.Inventory), mdText(driftCounts(r.Summary)))
	if len(r.Objects) == 0 {
		return b.String()
	}
	b.WriteString("\n| | Object | State | Source |\n| --- | --- | --- | --- |\n")
	for _, o := range r.Objects {
		sym, _ := driftSymbol(o.State)
		src := ""
		if o.Source.File != "" {
			src = mdCode(o.Source.String())
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", sym, mdCode(o.Ref.String()), string(o.State), src)
	}
	for i, o := range r.Objects {
		if i >= k {
			fmt.Fprintf(&b, "\n_%d more objects are left out to fit; the job summary and the JSON report list them all._\n", len(r.Objects)-k)
			break
		}
		b.WriteString("\n#### " + mdCode(o.Ref.String()) + " (" + string(o.State) + ")\n\n")
		for _, f := range o.Fields {
			b.WriteString("- " + mdCode(FieldLine(f)) + "\n")
		}
		for _, ow := range o.Ownership {
			b.WriteString("- " + mdCode(OwnershipLine(ow)) + "\n")
		}
		if o.Message != "" {
			b.WriteString("- " + mdText(o.Message) + "\n")
		}
		if diffs && o.Adopt != "" {
			b.WriteString("\n" + mdText(adoptIntro) + ":\n\n" + mdFence("yaml", o.Adopt) + "\n")
		}
		if diffs && o.Diff != "" && (o.State == drift.Drifted || o.State == drift.Missing) {
			b.WriteString("\n<details><summary>re-apply changes (live → git)</summary>\n\n" + mdFence("diff", o.Diff) + "\n</details>\n")
		}
	}
	return b.String()
}
