package report

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

func TestTextGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts TextOptions
	}{
		{"text", DefaultTextOptions()},
		{"text_color", TextOptions{Color: true}},
		{"text_unchanged", TextOptions{ShowUnchanged: true, MaxDiffLines: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Text(&buf, samplePlan(), tc.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, buf.Bytes())
		})
	}
}

func TestTextWithoutColorHasNoEscapeCodes(t *testing.T) {
	p := samplePlan()
	// Text from manifests and the server must not reach the terminal raw.
	p.Changes[2].Diff += "+  evil: \"\x1b[2J\x1b]0;pwned\x07\"\n"
	p.Changes[8].Message += "\x1b[31m\u202e"
	p.Changes[6].Warnings = append(p.Changes[6].Warnings, "\x9b31m")
	var buf bytes.Buffer
	if err := Text(&buf, p, TextOptions{ShowUnchanged: true}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\u009b"} {
		if strings.Contains(out, bad) {
			t.Errorf("output holds %q:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, `evil: "\x1b[2J\x1b]0;pwned\x07"`) {
		t.Errorf("escaped control characters missing:\n%s", out)
	}
}

func TestTextColor(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, samplePlan(), TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		ansiGreen + "+ configmap/web-docs -n prod (create)" + ansiReset,
		ansiYellow + "~ deployment.apps/web -n prod (update)" + ansiReset,
		ansiRed + "- namespace/legacy (delete)" + ansiReset + " " + ansiBoldRed + "DESTRUCTIVE" + ansiReset,
		ansiBoldRed + "! deployment.apps/api -n prod (conflict)" + ansiReset,
		ansiBoldRed + "! ingress.networking.k8s.io/web -n prod (invalid)" + ansiReset,
		ansiYellow + "~ spec.template.spec.containers[name=web].image: nginx:1.27.0 -> nginx:1.27.3" + ansiReset,
		ansiGreen + "+ spec.template.spec.containers[name=web].env[name=LOG_LEVEL]: {\"name\":\"LOG_LEVEL\",\"value\":\"debug\"}" + ansiReset,
		ansiRed + "- namespace/legacy (delete)" + ansiReset,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestTextHeader(t *testing.T) {
	upd := plan.Change{Ref: object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}, Action: plan.Update}
	conflict := upd
	conflict.Action = plan.Conflict
	for _, tc := range []struct {
		name string
		p    *plan.Plan
		want string
	}{
		{
			name: "sample",
			p:    samplePlan(),
			want: "Plan: 2 to create, 1 to update, 1 to delete, 1 conflict, 1 invalid, 1 pending, 2 unchanged; 6 dry runs, 1 known unchanged (snapshot 20261121T093015Z-7f3c9a1e) | risks: 1 data-loss, 1 broken-ref, 1 warning",
		},
		{
			name: "plural conflicts, no snapshot",
			p:    &plan.Plan{Summary: plan.Summarize([]plan.Change{conflict, conflict, upd}), Changes: []plan.Change{conflict, conflict, upd}},
			want: "Plan: 0 to create, 1 to update, 0 to delete, 2 conflicts, 0 invalid, 0 pending, 0 unchanged",
		},
		{
			name: "empty",
			p:    &plan.Plan{Snapshot: "s"},
			want: "Plan: 0 to create, 0 to update, 0 to delete, 0 conflicts, 0 invalid, 0 pending, 0 unchanged (snapshot s)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Text(&buf, tc.p, DefaultTextOptions()); err != nil {
				t.Fatal(err)
			}
			got, _, _ := strings.Cut(buf.String(), "\n")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTextLastLine(t *testing.T) {
	ref := object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}
	same := plan.Change{Ref: ref, Action: plan.Unchanged, Source: object.Source{File: "x.yaml", Line: 3}}
	for _, tc := range []struct {
		name string
		p    *plan.Plan
		want string
	}{
		{"nothing to do", planOf(same), noChangesLine},
		{"empty plan", planOf(), noChangesLine},
		{"a change", planOf(same, plan.Change{Ref: ref, Action: plan.Create, Diff: "+a: b\n"}), "    +a: b"},
		{"errors only", planOf(same, plan.Change{Ref: ref, Action: plan.Invalid, Message: "bad"}), "Apply would fail: 1 invalid object would not be written (the other objects would)."},
		{"conflicts and invalid", planOf(
			plan.Change{Ref: ref, Action: plan.Conflict},
			plan.Change{Ref: ref, Action: plan.Conflict},
			plan.Change{Ref: ref, Action: plan.Invalid},
		), "Apply would fail: 2 conflicts and 1 invalid object would not be written (the other objects would)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Text(&buf, tc.p, DefaultTextOptions()); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if diff := cmp.Diff(tc.want, lines[len(lines)-1]); diff != "" {
				t.Errorf("last line (-want +got):\n%s\nwhole output:\n%s", diff, buf.String())
			}
		})
	}
}

func TestTextUnchanged(t *testing.T) {
	for _, show := range []bool{false, true} {
		var buf bytes.Buffer
		if err := Text(&buf, samplePlan(), TextOptions{ShowUnchanged: show}); err != nil {
			t.Fatal(err)
		}
		for _, ref := range []string{"service/web -n prod  apps/prod/all.yaml:1", "serviceaccount/web -n prod  apps/prod/all.yaml:19"} {
			if got := strings.Contains(buf.String(), ref); got != show {
				t.Errorf("ShowUnchanged=%v: output holds %q = %v, want %v", show, ref, got, show)
			}
		}
	}
}

func TestTextMaxDiffLines(t *testing.T) {
	ref := object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}
	p := planOf(plan.Change{Ref: ref, Action: plan.Update, Diff: "--- a\n+++ b\n@@ -1 +1 @@\n-x: 1\n+x: 2\n"})
	for _, tc := range []struct {
		max  int
		want string
	}{
		{0, "    --- a\n    +++ b\n    @@ -1 +1 @@\n    -x: 1\n    +x: 2\n"},
		{5, "    --- a\n    +++ b\n    @@ -1 +1 @@\n    -x: 1\n    +x: 2\n"},
		{3, "    --- a\n    +++ b\n    @@ -1 +1 @@\n    ... 2 more diff lines not shown\n"},
		{4, "    --- a\n    +++ b\n    @@ -1 +1 @@\n    -x: 1\n    ... 1 more diff line not shown\n"},
	} {
		var buf bytes.Buffer
		if err := Text(&buf, p, TextOptions{MaxDiffLines: tc.max}); err != nil {
			t.Fatal(err)
		}
		_, got, _ := strings.Cut(buf.String(), "(update)\n")
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("MaxDiffLines=%d (-want +got):\n%s", tc.max, diff)
		}
	}
}

func TestTextConflictShowsWaysOut(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, samplePlan(), DefaultTextOptions()); err != nil {
		t.Fatal(err)
	}
	want := `    .spec.replicas                                                      owned by kubectl-edit
    .spec.template.spec.containers[name="api"].resources.limits.memory  owned by helm
    Two ways out:
      - change git to accept the live value of these fields, or
      - force this object: annotation snapply.dev/force-conflicts: "true" on the object, or --force-conflicts.
`
	if !strings.Contains(buf.String(), want) {
		t.Errorf("output lacks\n%s\nin\n%s", want, buf.String())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRenderersReturnWriteErrorsAndRejectNil(t *testing.T) {
	render := map[string]func(p *plan.Plan) error{
		"text":     func(p *plan.Plan) error { return Text(failWriter{}, p, DefaultTextOptions()) },
		"markdown": func(p *plan.Plan) error { return Markdown(failWriter{}, p, DefaultMarkdownOptions()) },
		"json":     func(p *plan.Plan) error { return JSON(failWriter{}, p) },
	}
	for name, fn := range render {
		if err := fn(samplePlan()); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s: error %v, want the writer's error", name, err)
		}
		if err := fn(nil); err == nil {
			t.Errorf("%s: no error for a nil plan", name)
		}
	}
}

func TestTextDiffModes(t *testing.T) {
	for _, tc := range []struct {
		mode            DiffMode
		fields, unified bool
	}{
		{"", true, false},
		{DiffStructural, true, false},
		{DiffUnified, false, true},
		{DiffBoth, true, true},
	} {
		var buf bytes.Buffer
		if err := Text(&buf, samplePlan(), TextOptions{Diff: tc.mode}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if got := strings.Contains(out, "~ spec.template.spec.containers[name=web].image: nginx:1.27.0 -> nginx:1.27.3"); got != tc.fields {
			t.Errorf("mode %q: field diff shown = %v, want %v", tc.mode, got, tc.fields)
		}
		if got := strings.Contains(out, "+        image: nginx:1.27.3"); got != tc.unified {
			t.Errorf("mode %q: unified diff of the update shown = %v, want %v", tc.mode, got, tc.unified)
		}
		// A create has no field diff: its unified diff shows in every mode.
		if !strings.Contains(out, "+kind: ConfigMap") {
			t.Errorf("mode %q: the create's diff is missing", tc.mode)
		}
	}
}
