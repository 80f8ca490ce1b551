package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

// prodOptions are the options of a PR comment for the prod environment.
func prodOptions() MarkdownOptions {
	opts := DefaultMarkdownOptions()
	opts.Title = "snapply plan for `prod`"
	opts.Marker = "<!-- snapply:prod -->"
	return opts
}

func TestMarkdownGolden(t *testing.T) {
	flat := prodOptions()
	flat.Details = false
	for _, tc := range []struct {
		name string
		p    *plan.Plan
		opts MarkdownOptions
	}{
		{"markdown", samplePlan(), prodOptions()},
		{"markdown_flat", samplePlan(), flat},
		{"markdown_nochanges", planOf(samplePlan().Changes[3:5]...), DefaultMarkdownOptions()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Markdown(&buf, tc.p, tc.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, buf.Bytes())
		})
	}
}

func TestMarkdownSummaryComesFirst(t *testing.T) {
	var buf bytes.Buffer
	if err := Markdown(&buf, samplePlan(), prodOptions()); err != nil {
		t.Fatal(err)
	}
	want := "<!-- snapply:prod -->\n" +
		"## snapply plan for `prod`\n" +
		"\n" +
		"| create | update | delete | **conflict** | **invalid** | pending | unchanged |\n" +
		"| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n" +
		"| 2 | 1 | 1 | 1 | 1 | 1 | 2 |\n"
	if got := buf.String(); !strings.HasPrefix(got, want) {
		t.Errorf("markdown does not start with\n%s\ngot:\n%s", want, got)
	}
}

func TestMarkdownSummaryTableShowsNonzeroActionsAndUnchanged(t *testing.T) {
	ref := object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}
	ch := func(a plan.Action) plan.Change { return plan.Change{Ref: ref, Action: a} }
	for _, tc := range []struct {
		name string
		p    *plan.Plan
		want string
	}{
		{"empty", planOf(), "| unchanged |\n| ---: |\n| 0 |\n"},
		{"unchanged only", planOf(ch(plan.Unchanged), ch(plan.Unchanged)), "| unchanged |\n| ---: |\n| 2 |\n"},
		{"create and delete", planOf(ch(plan.Delete), ch(plan.Create), ch(plan.Delete)),
			"| create | delete | unchanged |\n| ---: | ---: | ---: |\n| 1 | 2 | 0 |\n"},
		{"pending and invalid", planOf(ch(plan.Pending), ch(plan.Invalid), ch(plan.Unchanged)),
			"| **invalid** | pending | unchanged |\n| ---: | ---: | ---: |\n| 1 | 1 | 1 |\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Markdown(&buf, tc.p, DefaultMarkdownOptions()); err != nil {
				t.Fatal(err)
			}
			_, got, _ := strings.Cut(buf.String(), "## snapply plan\n\n")
			got = got[:strings.Index(got, "\n\n")+1]
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("summary table (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMarkdownStatusLine(t *testing.T) {
	ref := object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}
	for _, tc := range []struct {
		name     string
		p        *plan.Plan
		want     string
		wantNone []string
	}{
		{"no changes", planOf(plan.Change{Ref: ref, Action: plan.Unchanged}), noChangesLine, []string{"blocked", "| action |"}},
		{"changes", planOf(plan.Change{Ref: ref, Action: plan.Create}), "| create | `configmap/x -n a` |", []string{noChangesLine, "blocked"}},
		{"blocked", planOf(plan.Change{Ref: ref, Action: plan.Conflict}), "**Apply would fail: 1 conflict would not be written (the other objects would).**", []string{noChangesLine}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Markdown(&buf, tc.p, DefaultMarkdownOptions()); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), tc.want) {
				t.Errorf("markdown lacks %q:\n%s", tc.want, buf.String())
			}
			for _, s := range tc.wantNone {
				if strings.Contains(buf.String(), s) {
					t.Errorf("markdown holds %q:\n%s", s, buf.String())
				}
			}
		})
	}
}

// fenceLine matches a line that opens or closes a backtick code fence.
var fenceLine = regexp.MustCompile("^ {0,3}(`{3,})")

// codeBlocks returns the contents of the fenced code blocks of md, parsed
// the CommonMark way: a block closes at the first line of at least as many
// backticks as opened it, with nothing else on the line.
func codeBlocks(t *testing.T, md string) []string {
	t.Helper()
	var blocks []string
	var open string
	var body []string
	for _, line := range strings.Split(md, "\n") {
		m := fenceLine.FindStringSubmatch(line)
		switch {
		case open == "" && m != nil:
			open, body = m[1], nil
		case open != "" && m != nil && len(m[1]) >= len(open) && strings.TrimSpace(line) == m[1]:
			blocks = append(blocks, strings.Join(body, "\n"))
			open = ""
		case open != "":
			body = append(body, line)
		}
	}
	if open != "" {
		t.Fatalf("unclosed code fence in\n%s", md)
	}
	return blocks
}

func TestMarkdownDiffCannotBreakTheFence(t *testing.T) {
	ref := object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}
	diff := "--- a\n+++ b\n@@ -1,5 +1,5 @@\n ```\n   ````\n-x: 1\n+x: 2\n </details>\n ``````\n"
	p := planOf(plan.Change{Ref: ref, Action: plan.Update, Diff: diff, Message: "```\nnot closed", Source: object.Source{File: "a.yaml"}},
		plan.Change{Ref: ref, Action: plan.Invalid, Message: "bad ```` value"})
	var buf bytes.Buffer
	if err := Markdown(&buf, p, DefaultMarkdownOptions()); err != nil {
		t.Fatal(err)
	}
	blocks := codeBlocks(t, buf.String())
	want := []string{strings.TrimSuffix(diff, "\n"), "bad ```` value"}
	if d := cmp.Diff(want, blocks); d != "" {
		t.Errorf("code blocks (-want +got):\n%s\nmarkdown:\n%s", d, buf.String())
	}
	if strings.Count(buf.String(), "<details>") != 2 || strings.Count(buf.String(), "</details>") != 3 {
		t.Errorf("want 2 details sections (and the diff's literal </details>):\n%s", buf.String())
	}
}

func TestMarkdownEscapesTextFromTheCluster(t *testing.T) {
	ref := object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}
	p := planOf(plan.Change{Ref: ref, Action: plan.Pending, Message: "a | b\n<img src=x> *bold* [link](http://x) `code`"})
	var buf bytes.Buffer
	if err := Markdown(&buf, p, DefaultMarkdownOptions()); err != nil {
		t.Fatal(err)
	}
	want := "| pending | `configmap/x -n a` |  | a \\| b \\<img src=x\\> \\*bold\\* \\[link\\](http://x) \\`code\\` |\n"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("markdown lacks row\n%s\ngot:\n%s", want, buf.String())
	}
	if !strings.Contains(buf.String(), "Note: a \\| b \\<img src=x\\> \\*bold\\*") {
		t.Errorf("details do not escape the message:\n%s", buf.String())
	}
}

// hugePlan returns a plan of n changes of every action, each with a diff
// of about diffBytes bytes.
func hugePlan(n, diffBytes int) *plan.Plan {
	actions := []plan.Action{plan.Create, plan.Update, plan.Delete, plan.Conflict, plan.Invalid, plan.Pending, plan.Unchanged}
	line := "+    value: " + strings.Repeat("x", 60) + "\n"
	var changes []plan.Change
	for i := range n {
		c := plan.Change{
			Ref:    object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: fmt.Sprintf("ns-%02d", i%40), Name: fmt.Sprintf("app-%05d", i)},
			Action: actions[i%len(actions)],
			Source: object.Source{File: fmt.Sprintf("apps/app-%05d.yaml", i), Line: 1 + i%7},
		}
		switch c.Action {
		case plan.Unchanged:
		case plan.Conflict:
			c.Conflicts = []plan.FieldConflict{{Field: ".spec.replicas", Manager: "kubectl-edit"}, {Field: ".spec.paused", Manager: "hpa"}}
			c.Message = "Apply failed with 2 conflicts"
		case plan.Invalid:
			c.Message = fmt.Sprintf(`Deployment.apps "app-%05d" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`, i)
		default:
			c.Diff = "--- live\n+++ after apply\n@@ -1 +1 @@\n" + strings.Repeat(line, diffBytes/len(line))
			c.Images = []plan.ImageChange{{Container: "app", Old: "registry.example.com/app:1.0." + fmt.Sprint(i), New: "registry.example.com/app:1.1." + fmt.Sprint(i)}}
			c.Destructive = c.Action == plan.Delete && i%5 == 0
		}
		changes = append(changes, c)
	}
	return planOf(changes...)
}

// changedRefs returns the refs of the objects of p that are not unchanged.
func changedRefs(p *plan.Plan) []string {
	var refs []string
	for _, c := range p.Changes {
		if c.Action != plan.Unchanged {
			refs = append(refs, c.Ref.String())
		}
	}
	return refs
}

// rowRE matches a row of the changes table.
var rowRE = regexp.MustCompile(`(?m)^\| \**(create|update|delete|conflict|invalid|pending)[^|]*\| ` + "`")

// detailRE matches the start of a details section and what it holds.
var detailRE = regexp.MustCompile("(?s)<details><summary>.*?</details>")

func TestMarkdownMaxBytes(t *testing.T) {
	const (
		fits    = "fits"          // nothing left out
		diffs   = "diffs dropped" // some diffs replaced by a note
		details = "details dropped"
		rows    = "rows cut"
	)
	for _, tc := range []struct {
		name      string
		p         *plan.Plan
		diffBytes int
		want      string
	}{
		{name: "small plan", p: hugePlan(10, 500), diffBytes: 500, want: fits},
		{name: "some diffs too many", p: hugePlan(70, 2000), diffBytes: 2000, want: diffs},
		{name: "many objects", p: hugePlan(300, 2000), diffBytes: 2000, want: details},
		{name: "5000 objects with big diffs", p: hugePlan(5000, 4000), diffBytes: 4000, want: rows},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const limit = 65536
			opts := prodOptions()
			opts.MaxBytes = limit
			var buf bytes.Buffer
			if err := Markdown(&buf, tc.p, opts); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if len(out) > limit {
				t.Errorf("markdown is %d bytes, over the limit of %d", len(out), limit)
			}
			if !strings.HasPrefix(out, "<!-- snapply:prod -->\n## snapply plan for `prod`\n\n| create | update |") {
				t.Errorf("markdown does not start with the marker, title and summary:\n%.300s", out)
			}

			// Diffs are replaced from the end: once one is replaced, so
			// are all those after it.
			sections := detailRE.FindAllString(out, -1)
			noted, kept := 0, 0
			for i, sec := range sections {
				switch {
				case strings.Contains(sec, "_diff omitted: too large, see the job summary / `snapply show`_"):
					noted++
				case strings.Contains(sec, "```diff\n"):
					kept++
					if noted > 0 {
						t.Fatalf("details %d keeps its diff after an earlier one was dropped", i)
					}
				}
			}
			droppedAll := strings.Contains(out, "objects omitted: too large")
			more := regexp.MustCompile(`\| \| \.\.\. and (\d+) more \| \| \|\n`).FindStringSubmatch(out)
			cut := 0
			if more != nil {
				fmt.Sscan(more[1], &cut)
			}
			shown := len(rowRE.FindAllString(out, -1))
			if changed := len(changedRefs(tc.p)); shown+cut != changed {
				t.Errorf("%d rows and %d more, want %d changed objects", shown, cut, changed)
			}

			var got string
			switch {
			case cut > 0:
				got = rows
			case droppedAll:
				got = details
			case noted > 0:
				got = diffs
			default:
				got = fits
			}
			if got != tc.want {
				t.Fatalf("size limit met by %s, want %s (%d diffs kept, %d replaced, %d sections)", got, tc.want, kept, noted, len(sections))
			}
			switch got {
			case fits:
				if len(sections) != shown {
					t.Errorf("%d details for %d changed objects", len(sections), shown)
				}
			case diffs:
				// Only as many diffs as needed are left out.
				if kept == 0 || len(out) < limit-2*tc.diffBytes {
					t.Errorf("%d bytes with %d diffs kept: too much was left out", len(out), kept)
				}
			case details, rows:
				if kept != 0 {
					t.Errorf("%d diffs kept although whole details were dropped", kept)
				}
			}
			if got == rows && len(sections) != 0 {
				t.Errorf("%d details kept although rows were cut", len(sections))
			}
		})
	}
}

func TestMarkdownMaxBytesTooSmall(t *testing.T) {
	opts := prodOptions()
	opts.MaxBytes = 100
	var buf bytes.Buffer
	err := Markdown(&buf, samplePlan(), opts)
	if err == nil {
		t.Fatal("no error for a limit that cannot hold the summary")
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %d bytes despite the error", buf.Len())
	}
}
