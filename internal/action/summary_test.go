package action

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestWriteSummary(t *testing.T) {
	r := newRunner(t, prOpened)
	a := r.action()
	for _, md := range []string{"## snapply plan\n\n2 to create\n", "## second step\n"} {
		if err := WriteSummary(a, md); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(r.env["GITHUB_STEP_SUMMARY"])
	if err != nil {
		t.Fatal(err)
	}
	if want := "## snapply plan\n\n2 to create\n\n## second step\n\n"; string(got) != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
}

// bigPlan returns markdown like a report of a large plan: one <details>
// block with a diff per object, with multi-byte characters, over size bytes.
func bigPlan(size int) string {
	var b strings.Builder
	b.WriteString("## snapply plan — prod\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "<details><summary>configmap/c%d -n prod — update</summary>\n\n```diff\n", i)
		for j := 0; j < 40; j++ {
			fmt.Fprintf(&b, "-  key%d: «old value» %d\n+  key%d: «new value» %d ✓\n", j, i, j, i)
		}
		b.WriteString("```\n\n</details>\n\n")
	}
	return b.String()
}

func TestWriteSummaryCut(t *testing.T) {
	r := newRunner(t, prOpened)
	md := bigPlan(3 << 20)
	if err := WriteSummary(r.action(), md); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(r.env["GITHUB_STEP_SUMMARY"])
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	if len(s) > MaxSummaryBytes {
		t.Errorf("summary is %d bytes, over GitHub's limit of %d", len(s), MaxSummaryBytes)
	}
	if len(s) < MaxSummaryBytes-64<<10 {
		t.Errorf("summary is %d bytes: cut far below the limit", len(s))
	}
	if !strings.HasSuffix(s, "\n\n"+SummaryCutNote+"\n") {
		t.Errorf("summary ends %q, want the cut note", s[len(s)-200:])
	}
	if !utf8.ValidString(s) {
		t.Error("summary is not valid UTF-8: cut inside a character")
	}
	body := strings.TrimSuffix(s, "\n"+SummaryCutNote+"\n")
	if opened, closed := strings.Count(body, "<details>"), strings.Count(body, "</details>"); opened != closed {
		t.Errorf("summary opens %d <details> and closes %d", opened, closed)
	}
	if n := strings.Count(body, "```"); n%2 != 0 {
		t.Errorf("summary leaves a code fence open (%d fences)", n)
	}
	// What is kept is the start of the report, whole lines only.
	kept := body[:strings.LastIndex(body, "\n-  key")]
	if !strings.HasPrefix(md, kept) {
		t.Error("summary is not a prefix of the report")
	}
}

func TestWriteSummaryCutAppendsWithinLimit(t *testing.T) {
	r := newRunner(t, prOpened)
	first := strings.Repeat("x", 600<<10) + "\n"
	if err := os.WriteFile(r.env["GITHUB_STEP_SUMMARY"], []byte(first), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummary(r.action(), bigPlan(1<<20)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(r.env["GITHUB_STEP_SUMMARY"])
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > MaxSummaryBytes {
		t.Errorf("summary file is %d bytes, over %d", fi.Size(), MaxSummaryBytes)
	}

	// A full file takes nothing more, and says so.
	if err := os.WriteFile(r.env["GITHUB_STEP_SUMMARY"], []byte(strings.Repeat("x", MaxSummaryBytes-10)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummary(r.action(), "## more\n"+strings.Repeat("x", 100)); err == nil {
		t.Error("WriteSummary wrote past 1 MiB without an error")
	}
}

func TestWriteSummaryOutsideActions(t *testing.T) {
	r := newBareRunner(t)
	if err := WriteSummary(r.action(), "## plan\n"); err != nil {
		t.Errorf("WriteSummary without GITHUB_STEP_SUMMARY: %v", err)
	}
	if r.out.Len() != 0 {
		t.Errorf("printed %q", r.out.String())
	}
}

func TestCutSummary(t *testing.T) {
	note := "\n" + SummaryCutNote
	more := strings.Repeat("z", 200) + "\n" // what does not fit
	tests := []struct {
		name   string
		md     string
		budget int
		want   string
	}{
		{"fits", "a\nb\n", 4, "a\nb\n"},
		{"whole lines", "line one\nline two\n" + more, 18 + len(note), "line one\nline two\n" + note},
		{"part of a line is dropped", "line one\nline two\n" + more, 25 + len(note), "line one\nline two\n" + note},
		{"closes a fence", "```diff\n-a\n+b\n" + more, 18 + len(note), "```diff\n-a\n+b\n```\n" + note},
		{"drops lines to make room to close", "```diff\n-a\n+b\n" + more, 17 + len(note), "```diff\n-a\n```\n" + note},
		{"longer fence", "````\n```\nx\n" + more, 17 + len(note), "````\n```\nx\n````\n" + note},
		{"closed fence", "```\nx\n```\n" + more, 10 + len(note), "```\nx\n```\n" + note},
		{"closes details", "<details>\n\nabc\n" + more, 26 + len(note), "<details>\n\nabc\n</details>\n" + note},
		{"details inside a fence do not count", "```\n<details>\n" + more, 18 + len(note), "```\n<details>\n```\n" + note},
		{"one long line cut between characters", strings.Repeat("é", 100), 7 + len(note), "ééé\n" + note},
		{"no room for the note", strings.Repeat("x", 100), len(note), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := cutSummary(tt.md, tt.budget)
			if ok != (tt.want != "") {
				t.Errorf("ok = %v", ok)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("cutSummary (-want +got):\n%s", diff)
			}
			if len(got) > tt.budget {
				t.Errorf("%d bytes, over the budget of %d", len(got), tt.budget)
			}
		})
	}
}
