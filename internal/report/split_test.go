package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

// githubLimit is the largest body of a GitHub comment, in characters; a
// byte limit of the same number is stricter.
const githubLimit = 65536

// checkPieces checks what every split report must hold: each piece within
// the limit and starting with the marker, whole details sections only,
// part numbers in order, the summary in the first piece, and every changed
// object somewhere.
func checkPieces(t *testing.T, p *plan.Plan, opts MarkdownOptions, pieces []string, limit int) {
	t.Helper()
	if len(pieces) == 0 {
		t.Fatal("no pieces")
	}
	for i, piece := range pieces {
		if len(piece) > limit {
			t.Errorf("piece %d is %d bytes, over the limit of %d", i+1, len(piece), limit)
		}
		if !strings.HasPrefix(piece, opts.Marker+"\n") {
			t.Errorf("piece %d does not start with the marker:\n%.200s", i+1, piece)
		}
		wantTitle := "## " + opts.Title + "\n"
		if len(pieces) > 1 {
			wantTitle = fmt.Sprintf("## %s (part %d/%d)\n", opts.Title, i+1, len(pieces))
		}
		if !strings.Contains(piece, "\n"+wantTitle) {
			t.Errorf("piece %d lacks the title %q:\n%.200s", i+1, wantTitle, piece)
		}
		if open, closed := strings.Count(piece, "<details>"), strings.Count(piece, "</details>"); open != closed {
			t.Errorf("piece %d opens %d details and closes %d", i+1, open, closed)
		}
		if hasSummary := strings.Contains(piece, "| ---: |"); hasSummary != (i == 0) {
			t.Errorf("piece %d holds the summary table: %v", i+1, hasSummary)
		}
	}
	all := strings.Join(pieces, "")
	for _, ref := range changedRefs(p) {
		if !strings.Contains(all, ref+" (") {
			t.Errorf("no piece names %s", ref)
		}
	}
}

func TestSplitMarkdownHugePlan(t *testing.T) {
	p := hugePlan(5000, 4000)
	opts := prodOptions()
	pieces, err := SplitMarkdown(p, opts, githubLimit)
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) < 2 {
		t.Fatalf("%d pieces for a plan of 20 MB", len(pieces))
	}
	checkPieces(t, p, opts, pieces, githubLimit)
	// Nothing is left out of a split report that fits a piece.
	all := strings.Join(pieces, "")
	if strings.Contains(all, "omitted") {
		t.Error("a split report leaves out details that fit a piece")
	}
	want := 0
	for _, c := range p.Changes {
		if c.Diff != "" {
			want++
		}
	}
	if got := strings.Count(all, "```diff\n"); got != want {
		t.Errorf("%d diffs, want %d", got, want)
	}
}

func TestSplitMarkdownFitsInOne(t *testing.T) {
	opts := prodOptions()
	opts.MaxBytes = 10 // ignored
	pieces, err := SplitMarkdown(samplePlan(), opts, githubLimit)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	opts.MaxBytes = 0
	if err := Markdown(&buf, samplePlan(), opts); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{buf.String()}, pieces); diff != "" {
		t.Errorf("pieces (-want +got):\n%s", diff)
	}
}

func TestSplitMarkdownSmallLimits(t *testing.T) {
	ref := object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "big"}
	huge := planOf(
		plan.Change{Ref: ref, Action: plan.Update, Diff: strings.Repeat("+  x: 1\n", 2000), Message: "one huge diff"},
	)
	longMessage := planOf(
		plan.Change{Ref: ref, Action: plan.Invalid, Message: strings.Repeat("bad value ", 1000)},
	)
	for _, tc := range []struct {
		name       string
		p          *plan.Plan
		limit      int
		wantPieces int
		wantNote   string
	}{
		{"sample in small pieces", unanalysed(samplePlan()), 1500, 4, ""},
		{"sample in pieces that fit one object each", unanalysed(samplePlan()), 1100, 5, ""},
		{"analysed sample in small pieces", samplePlan(), 2500, 3, ""},
		{"diff larger than a piece", huge, 4000, 1, "_diff omitted: too large, see the job summary / `snapply show`_"},
		{"details larger than a piece", longMessage, 4000, 1, "_details omitted: too large, see the job summary / `snapply show`_"},
		{"many pieces", hugePlan(300, 300), 2000, 73, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := prodOptions()
			pieces, err := SplitMarkdown(tc.p, opts, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(pieces) != tc.wantPieces {
				t.Errorf("%d pieces, want %d", len(pieces), tc.wantPieces)
			}
			checkPieces(t, tc.p, opts, pieces, tc.limit)
			all := strings.Join(pieces, "")
			if tc.wantNote != "" && !strings.Contains(all, tc.wantNote) {
				t.Errorf("pieces lack %q", tc.wantNote)
			}
			if tc.wantNote == "" && strings.Contains(all, "omitted") {
				t.Errorf("pieces leave something out:\n%s", all)
			}
		})
	}
}

func TestSplitMarkdownErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     *plan.Plan
		limit int
	}{
		{"nil plan", nil, githubLimit},
		{"zero limit", samplePlan(), 0},
		{"limit below the summary", samplePlan(), 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if pieces, err := SplitMarkdown(tc.p, prodOptions(), tc.limit); err == nil {
				t.Errorf("no error; %d pieces", len(pieces))
			}
		})
	}
}
