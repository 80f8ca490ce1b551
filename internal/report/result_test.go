package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

// conflictErr is the error apply records for a conflict of the plan.
const conflictErr = `conflict: .spec.replicas owned by kubectl-edit, .spec.template.spec.containers[name="api"].resources.limits.memory owned by helm; ` + plan.ConflictHelp

// sampleResult returns the result of applying a plan with one object of
// every outcome a report must show: a CRD applied and Current, a ConfigMap
// replanned and applied, a Deployment applied that did not become ready in
// time, two unchanged objects, a pruned ConfigMap, a custom resource the
// server refused (422), a conflict not attempted, and a prune not attempted
// because of the failures.
func sampleResult() *apply.Result {
	changes := []plan.Change{
		{
			Ref:    object.Ref{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com"},
			Action: plan.Create,
			Source: object.Source{File: "crds/widget.yaml", Line: 1},
			Diff: `--- customresourcedefinition.apiextensions.k8s.io/widgets.example.com (live)
+++ customresourcedefinition.apiextensions.k8s.io/widgets.example.com (after apply)
@@ -0,0 +1,6 @@
+apiVersion: apiextensions.k8s.io/v1
+kind: CustomResourceDefinition
+metadata:
+  name: widgets.example.com
+spec:
+  group: example.com
`,
		},
		{
			Ref:    object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "legacy-flags"},
			Action: plan.Delete,
			Diff: `--- configmap/legacy-flags -n prod (live)
+++ configmap/legacy-flags -n prod (after apply)
@@ -1,4 +0,0 @@
-apiVersion: v1
-data:
-  beta: "true"
-kind: ConfigMap
`,
			LiveResourceVersion: "1180",
		},
		{
			Ref:    object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "old-settings"},
			Action: plan.Delete,
			Diff: `--- configmap/old-settings -n prod (live)
+++ configmap/old-settings -n prod (after apply)
@@ -1,4 +0,0 @@
-apiVersion: v1
-data:
-  mode: classic
-kind: ConfigMap
`,
			LiveResourceVersion: "1181",
		},
		{
			Ref:    object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "web-config"},
			Action: plan.Update,
			Source: object.Source{File: "apps/prod/all.yaml", Line: 90},
			Diff: `--- configmap/web-config -n prod (live)
+++ configmap/web-config -n prod (after apply)
@@ -1,3 +1,3 @@
 data:
-  LOG_LEVEL: info
+  LOG_LEVEL: debug
 kind: ConfigMap
`,
			LiveResourceVersion: "2040",
		},
		{
			Ref:                 object.Ref{Version: "v1", Kind: "Service", Namespace: "prod", Name: "web"},
			Action:              plan.Unchanged,
			Source:              object.Source{File: "apps/prod/all.yaml", Line: 1},
			LiveResourceVersion: "2044",
		},
		{
			Ref:                 object.Ref{Version: "v1", Kind: "ServiceAccount", Namespace: "prod", Name: "web"},
			Action:              plan.Unchanged,
			Source:              object.Source{File: "apps/prod/all.yaml", Line: 19},
			LiveResourceVersion: "2045",
		},
		{
			Ref:    object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "api"},
			Action: plan.Conflict,
			Source: object.Source{File: "apps/prod/api.yaml", Line: 1},
			Conflicts: []plan.FieldConflict{
				{Field: ".spec.replicas", Manager: "kubectl-edit"},
				{Field: `.spec.template.spec.containers[name="api"].resources.limits.memory`, Manager: "helm"},
			},
			Message: plan.ConflictHelp,
			// What forcing would change, so that people can choose.
			Diff: `--- deployment.apps/api -n prod (live)
+++ deployment.apps/api -n prod (after apply)
@@ -6,3 +6,3 @@
 spec:
-  replicas: 5
+  replicas: 2
   selector:
`,
			LiveResourceVersion: "2101",
		},
		{
			Ref:    object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "web"},
			Action: plan.Update,
			Source: object.Source{File: "apps/prod/all.yaml", Line: 27},
			Diff: `--- deployment.apps/web -n prod (live)
+++ deployment.apps/web -n prod (after apply)
@@ -18,7 +18,7 @@
     spec:
       containers:
       - name: web
-        image: nginx:1.27.0
+        image: nginx:1.27.3
         ports:
         - containerPort: 80
`,
			Images:              []plan.ImageChange{{Container: "web", Old: "nginx:1.27.0", New: "nginx:1.27.3"}},
			LiveResourceVersion: "2102",
		},
		{
			Ref:     object.Ref{Group: "example.com", Version: "v1alpha1", Kind: "Widget", Namespace: "prod", Name: "w1"},
			Action:  plan.Pending,
			Source:  object.Source{File: "apps/prod/widget.yaml", Line: 1},
			Message: "not validated by the server: its CustomResourceDefinition widgets.example.com is created by this plan",
			Diff: `--- widget.example.com/w1 -n prod (live)
+++ widget.example.com/w1 -n prod (after apply)
@@ -0,0 +1,4 @@
+apiVersion: example.com/v1alpha1
+kind: Widget
+spec:
+  size: 30
`,
		},
	}
	p := &plan.Plan{Snapshot: "20261121T093015Z-7f3c9a1e", Summary: plan.Summarize(changes), Changes: changes}
	ms := time.Millisecond
	recs := []apply.Record{
		{Outcome: apply.Applied, Wave: "definitions", Readiness: apply.StatusCurrent, Duration: 84 * ms},
		{Outcome: apply.NotAttempted, Wave: "prune", Error: "not pruned: some objects were not applied"},
		{Outcome: apply.Pruned, Wave: "prune", Duration: 31 * ms},
		{Outcome: apply.Applied, Wave: "prerequisites", Readiness: apply.StatusCurrent, ReadinessMessage: "Resource is always ready", Replanned: true, Duration: 112 * ms},
		{Outcome: apply.Unchanged, Wave: "workloads"},
		{Outcome: apply.Unchanged, Wave: "prerequisites"},
		{Outcome: apply.NotAttempted, Wave: "workloads", Error: conflictErr},
		{Outcome: apply.Applied, Wave: "workloads", Readiness: apply.StatusInProgress, ReadinessMessage: "Available: 2/3", Duration: 57 * ms},
		{Outcome: apply.Failed, Wave: "workloads", Duration: 23 * ms,
			Error: `Widget.example.com "w1" is invalid: spec.size: Invalid value: 30: spec.size in body should be less than or equal to 10`},
	}
	start := time.Date(2026, 11, 21, 9, 31, 0, 0, time.UTC)
	for i := range recs {
		c := changes[i]
		recs[i].Ref, recs[i].Source, recs[i].Action = c.Ref, c.Source, c.Action
		if recs[i].Duration > 0 {
			recs[i].Started = start.Add(time.Duration(i) * time.Second)
		}
	}
	return &apply.Result{
		Plan:     p,
		Summary:  apply.Summary{Applied: 3, Unchanged: 2, Pruned: 1, Failed: 1, NotAttempted: 2, NotReady: 1},
		Records:  recs,
		Duration: 12345 * ms,
	}
}

// resultOf returns a result of records with their counts, against a plan
// of the same objects.
func resultOf(recs ...apply.Record) *apply.Result {
	r := &apply.Result{Plan: &plan.Plan{Snapshot: "snap-1", Changes: []plan.Change{}}, Records: recs, Duration: 2 * time.Second}
	for _, rec := range recs {
		r.Plan.Changes = append(r.Plan.Changes, plan.Change{Ref: rec.Ref, Action: rec.Action, Source: rec.Source})
		s := &r.Summary
		switch rec.Outcome {
		case apply.Applied:
			s.Applied++
			if rec.Readiness != "" && rec.Readiness != apply.StatusCurrent {
				s.NotReady++
			}
		case apply.Unchanged:
			s.Unchanged++
		case apply.Pruned:
			s.Pruned++
		case apply.Failed:
			s.Failed++
		case apply.NotAttempted:
			s.NotAttempted++
		}
	}
	r.Plan.Summary = plan.Summarize(r.Plan.Changes)
	return r
}

func TestSampleResultCounts(t *testing.T) {
	// The golden files are only as good as the sample: its hand-written
	// summary must count its records.
	r := sampleResult()
	if diff := cmp.Diff(resultOf(r.Records...).Summary, r.Summary); diff != "" {
		t.Errorf("sample summary (-want +got):\n%s", diff)
	}
}

func TestResultGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		render func(w *bytes.Buffer) error
	}{
		{"result_text", func(w *bytes.Buffer) error { return ResultText(w, sampleResult(), DefaultTextOptions()) }},
		{"result_text_color", func(w *bytes.Buffer) error { return ResultText(w, sampleResult(), TextOptions{Color: true}) }},
		{"result_markdown", func(w *bytes.Buffer) error { return ResultMarkdown(w, sampleResult(), prodResultOptions()) }},
		{"result_json", func(w *bytes.Buffer) error { return ResultJSON(w, sampleResult()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.render(&buf); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, buf.Bytes())
		})
	}
}

// prodResultOptions are the options of an apply comment for prod.
func prodResultOptions() MarkdownOptions {
	opts := DefaultResultMarkdownOptions()
	opts.Title = "snapply apply for `prod`"
	opts.Marker = "<!-- snapply:prod -->"
	return opts
}

func TestResultTextHeader(t *testing.T) {
	ref := object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}
	for _, tc := range []struct {
		name string
		r    *apply.Result
		want string
	}{
		{"sample", sampleResult(), "Apply: 3 applied, 2 unchanged, 1 pruned, 1 failed, 2 not attempted, 1 not ready (12.3s)"},
		{"all ready", resultOf(
			apply.Record{Ref: ref, Action: plan.Create, Outcome: apply.Applied, Readiness: apply.StatusCurrent},
			apply.Record{Ref: ref, Action: plan.Unchanged, Outcome: apply.Unchanged},
		), "Apply: 1 applied, 1 unchanged, 0 pruned, 0 failed, 0 not attempted (2s)"},
		{"empty", &apply.Result{Plan: &plan.Plan{}}, "Apply: 0 applied, 0 unchanged, 0 pruned, 0 failed, 0 not attempted (0s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := ResultText(&buf, tc.r, DefaultTextOptions()); err != nil {
				t.Fatal(err)
			}
			got, _, _ := strings.Cut(buf.String(), "\n")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResultClosingLine(t *testing.T) {
	ref := object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}
	applied := apply.Record{Ref: ref, Action: plan.Update, Outcome: apply.Applied, Readiness: apply.StatusCurrent}
	notReady := applied
	notReady.Readiness, notReady.ReadinessMessage = apply.StatusFailed, "CrashLoopBackOff"
	failed := apply.Record{Ref: ref, Action: plan.Update, Outcome: apply.Failed, Error: "boom"}
	skipped := apply.Record{Ref: ref, Action: plan.Delete, Outcome: apply.NotAttempted, Error: "not pruned: some objects were not applied"}
	interrupted := resultOf(applied, apply.Record{Ref: ref, Action: plan.Create, Outcome: apply.NotAttempted, Error: "interrupted before it was written"})
	interrupted.Interrupted = true
	interruptedClean := resultOf(applied)
	interruptedClean.Interrupted = true
	for _, tc := range []struct {
		name string
		r    *apply.Result
		want string
	}{
		{"all applied", resultOf(applied, apply.Record{Ref: ref, Action: plan.Unchanged, Outcome: apply.Unchanged}), completeLine},
		{"nothing to do", resultOf(), completeLine},
		{"failures", resultOf(applied, failed, skipped, skipped, notReady),
			"Apply FAILED: 1 failed, 2 not attempted, 1 not ready. What was applied stays applied; fix the cause and run apply again."},
		{"not ready only", resultOf(notReady),
			"Apply FAILED: 1 not ready. What was applied stays applied; fix the cause and run apply again."},
		{"interrupted", interrupted,
			"Interrupted: the apply stopped before it finished; 1 not attempted. What was applied stays applied; run apply again to finish."},
		{"interrupted during the wait", interruptedClean,
			"Interrupted: the apply stopped before it finished. What was applied stays applied; run apply again to finish."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := ResultText(&buf, tc.r, DefaultTextOptions()); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if diff := cmp.Diff(tc.want, lines[len(lines)-1]); diff != "" {
				t.Errorf("last line (-want +got):\n%s\nwhole output:\n%s", diff, buf.String())
			}
			buf.Reset()
			if err := ResultMarkdown(&buf, tc.r, DefaultResultMarkdownOptions()); err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if !tc.r.OK() {
				want = "**" + mdText(want) + "**"
			}
			if !strings.Contains(buf.String(), "\n"+want+"\n") {
				t.Errorf("markdown lacks %q:\n%s", want, buf.String())
			}
		})
	}
}

func TestResultTextLines(t *testing.T) {
	var buf bytes.Buffer
	if err := ResultText(&buf, sampleResult(), DefaultTextOptions()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"\n+ customresourcedefinition.apiextensions.k8s.io/widgets.example.com (applied, Current)  crds/widget.yaml:1\n",
		"\n~ configmap/web-config -n prod (applied, Current)  apps/prod/all.yaml:90\n    replanned: ",
		"\n~ deployment.apps/web -n prod (applied, InProgress: Available: 2/3)  apps/prod/all.yaml:27\n",
		"\n- configmap/old-settings -n prod (pruned)\n",
		"\n! widget.example.com/w1 -n prod (failed)  apps/prod/widget.yaml:1\n" +
			`    Widget.example.com "w1" is invalid: spec.size: Invalid value: 30: spec.size in body should be less than or equal to 10` + "\n",
		"\n! configmap/legacy-flags -n prod (not attempted)\n    not pruned: some objects were not applied\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, unchanged := range []string{"service/web", "serviceaccount/web"} {
		if strings.Contains(out, unchanged) {
			t.Errorf("output lists unchanged %s:\n%s", unchanged, out)
		}
	}
}

func TestResultTextConflictKeepsFieldsAndWaysOut(t *testing.T) {
	var buf bytes.Buffer
	if err := ResultText(&buf, sampleResult(), DefaultTextOptions()); err != nil {
		t.Fatal(err)
	}
	want := `! deployment.apps/api -n prod (not attempted)  apps/prod/api.yaml:1
    conflict: fields owned by other field managers:
      .spec.replicas                                                      owned by kubectl-edit
      .spec.template.spec.containers[name="api"].resources.limits.memory  owned by helm
    Two ways out:
      - change git to accept the live value of these fields, or
      - force this object: annotation snapply.dev/force-conflicts: "true" on the object, or --force-conflicts.
`
	if !strings.Contains(buf.String(), want) {
		t.Errorf("output lacks\n%s\nin\n%s", want, buf.String())
	}

	// A conflict interrupted before its turn still says why it would
	// not have been applied, and also that it was interrupted.
	r := sampleResult()
	r.Records[6].Error = "interrupted before it was written"
	buf.Reset()
	if err := ResultText(&buf, r, DefaultTextOptions()); err != nil {
		t.Fatal(err)
	}
	want = "apps/prod/api.yaml:1\n    interrupted before it was written\n    conflict: fields owned by other field managers:\n"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("output lacks\n%s\nin\n%s", want, buf.String())
	}
}

func TestResultTextShowUnchanged(t *testing.T) {
	for _, show := range []bool{false, true} {
		var buf bytes.Buffer
		if err := ResultText(&buf, sampleResult(), TextOptions{ShowUnchanged: show}); err != nil {
			t.Fatal(err)
		}
		for _, ref := range []string{"\n  service/web -n prod  apps/prod/all.yaml:1\n", "\n  serviceaccount/web -n prod  apps/prod/all.yaml:19\n"} {
			if got := strings.Contains(buf.String(), ref); got != show {
				t.Errorf("ShowUnchanged=%v: output holds %q = %v, want %v", show, ref, got, show)
			}
		}
	}
}

func TestResultTextWithoutColorHasNoEscapeCodes(t *testing.T) {
	r := sampleResult()
	// Text from manifests and the server must not reach the terminal raw.
	r.Records[8].Error += "\x1b[2J\x1b]0;pwned\x07"
	r.Records[7].ReadinessMessage += "\x1b[31m\u202e"
	r.Records[3].Source.File = "apps/\x9b31mprod.yaml"
	r.Records[1].Error += "\n\u2066hidden"
	var buf bytes.Buffer
	if err := ResultText(&buf, r, TextOptions{ShowUnchanged: true}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\u2066", "\u009b"} {
		if strings.Contains(out, bad) {
			t.Errorf("output holds %q:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, `\x1b[2J\x1b]0;pwned\x07`) {
		t.Errorf("escaped control characters missing:\n%s", out)
	}
}

func TestResultTextColor(t *testing.T) {
	var buf bytes.Buffer
	if err := ResultText(&buf, sampleResult(), TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		ansiGreen + "+ customresourcedefinition.apiextensions.k8s.io/widgets.example.com" + ansiReset + " (applied, " + ansiGreen + "Current" + ansiReset + ")",
		ansiYellow + "~ deployment.apps/web -n prod" + ansiReset + " (applied, " + ansiYellow + "InProgress: Available: 2/3" + ansiReset + ")",
		ansiRed + "- configmap/old-settings -n prod" + ansiReset + " (pruned)",
		ansiBoldRed + "! widget.example.com/w1 -n prod" + ansiReset + " (failed)",
		ansiBoldRed + "! deployment.apps/api -n prod" + ansiReset + " (not attempted)",
		ansiBoldRed + "Apply FAILED: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	ok := resultOf(apply.Record{Ref: object.Ref{Version: "v1", Kind: "ConfigMap", Name: "x"}, Action: plan.Create, Outcome: apply.Applied})
	if err := ResultText(&buf, ok, TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if want := ansiGreen + completeLine + ansiReset + "\n"; !strings.HasSuffix(buf.String(), want) {
		t.Errorf("output does not end with %q:\n%s", want, buf.String())
	}
}

func TestDurationText(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{450 * time.Microsecond, "450µs"},
		{1234567 * time.Nanosecond, "1ms"},
		{450 * time.Millisecond, "450ms"},
		{12345 * time.Millisecond, "12.3s"},
		{123456 * time.Millisecond, "2m3.5s"},
	} {
		if got := durationText(tc.d); got != tc.want {
			t.Errorf("durationText(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestResultMarkdownSummaryComesFirst(t *testing.T) {
	var buf bytes.Buffer
	if err := ResultMarkdown(&buf, sampleResult(), prodResultOptions()); err != nil {
		t.Fatal(err)
	}
	want := "<!-- snapply:prod -->\n" +
		"## snapply apply for `prod`\n" +
		"\n" +
		"| applied | unchanged | pruned | **failed** | **not attempted** | **not ready** |\n" +
		"| ---: | ---: | ---: | ---: | ---: | ---: |\n" +
		"| 3 | 2 | 1 | 1 | 2 | 1 |\n" +
		"\n" +
		"Took 12.3s; planned against snapshot `20261121T093015Z-7f3c9a1e`.\n" +
		"\n" +
		"**Apply FAILED: 1 failed, 2 not attempted, 1 not ready. What was applied stays applied; fix the cause and run apply again.**\n"
	if got := buf.String(); !strings.HasPrefix(got, want) {
		t.Errorf("markdown does not start with\n%s\ngot:\n%s", want, got)
	}
}

func TestResultMarkdownRows(t *testing.T) {
	var buf bytes.Buffer
	if err := ResultMarkdown(&buf, sampleResult(), prodResultOptions()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"| applied | `customresourcedefinition.apiextensions.k8s.io/widgets.example.com` | Current | `crds/widget.yaml:1` |  |\n",
		"| applied (replanned) | `configmap/web-config -n prod` | Current | `apps/prod/all.yaml:90` |  |\n",
		"| applied | `deployment.apps/web -n prod` | **InProgress**: Available: 2/3 | `apps/prod/all.yaml:27` |  |\n",
		"| pruned | `configmap/old-settings -n prod` |  |  |  |\n",
		"| **failed** | `widget.example.com/w1 -n prod` |  | `apps/prod/widget.yaml:1` | Widget.example.com \"w1\" is invalid: spec.size: Invalid value: 30: spec.size in body should be less than or equal to 10 |\n",
		"| **not attempted** | `deployment.apps/api -n prod` |  | `apps/prod/api.yaml:1` | conflict: 2 fields owned by `kubectl-edit`, `helm` |\n",
		"| **not attempted** | `configmap/legacy-flags -n prod` |  |  | not pruned: some objects were not applied |\n",
		// The plan's details keep the ways out of the conflict.
		"- force this object: annotation `snapply.dev/force-conflicts: \"true\"` on the object, or `--force-conflicts`.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "`service/web -n prod`") {
		t.Errorf("markdown lists an unchanged object:\n%s", out)
	}
	// One details section per changed object of the plan, after the tables.
	if got, want := len(detailRE.FindAllString(out, -1)), len(changedRefs(sampleResult().Plan)); got != want {
		t.Errorf("%d details sections, want %d", got, want)
	}
	if strings.Index(out, "<details>") < strings.LastIndex(out, "| **not attempted** |") {
		t.Errorf("details come before the objects table:\n%s", out)
	}
}

func TestResultMarkdownEscapesTextFromTheCluster(t *testing.T) {
	ref := object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}
	r := resultOf(
		apply.Record{Ref: ref, Action: plan.Update, Outcome: apply.Failed, Error: "a | b\n<img src=x> *bold*"},
		apply.Record{Ref: ref, Action: plan.Update, Outcome: apply.Applied, Readiness: apply.StatusFailed, ReadinessMessage: "x|y <b>"},
	)
	var buf bytes.Buffer
	if err := ResultMarkdown(&buf, r, DefaultResultMarkdownOptions()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| **failed** | `configmap/x -n a` |  |  | a \\| b \\<img src=x\\> \\*bold\\* |\n",
		"| applied | `configmap/x -n a` | **Failed**: x\\|y \\<b\\> |  |  |\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("markdown lacks row\n%s\ngot:\n%s", want, buf.String())
		}
	}
}

// hugeResult returns the result of applying hugePlan(n, diffBytes), every
// write failed with a long error.
func hugeResult(n, diffBytes int) *apply.Result {
	p := hugePlan(n, diffBytes)
	var recs []apply.Record
	for _, c := range p.Changes {
		rec := apply.Record{Ref: c.Ref, Source: c.Source, Action: c.Action, Outcome: apply.Failed,
			Error: fmt.Sprintf("%s is invalid: %s", c.Ref, strings.Repeat("bad value ", 5))}
		if c.Action == plan.Unchanged {
			rec.Outcome, rec.Error = apply.Unchanged, ""
		}
		recs = append(recs, rec)
	}
	r := resultOf(recs...)
	r.Plan = p
	return r
}

func TestResultMarkdownMaxBytes(t *testing.T) {
	const (
		fits    = "fits"          // nothing left out
		diffs   = "diffs dropped" // some diffs replaced by a note
		details = "details dropped"
		rows    = "rows cut"
	)
	for _, tc := range []struct {
		name string
		r    *apply.Result
		want string
	}{
		{"small result", hugeResult(10, 500), fits},
		{"some diffs too many", hugeResult(50, 2000), diffs},
		{"many objects", hugeResult(200, 2000), details},
		{"5000 objects with big diffs", hugeResult(5000, 4000), rows},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const limit = 65536
			opts := prodResultOptions()
			opts.MaxBytes = limit
			var buf bytes.Buffer
			if err := ResultMarkdown(&buf, tc.r, opts); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if len(out) > limit {
				t.Errorf("markdown is %d bytes, over the limit of %d", len(out), limit)
			}
			if !strings.HasPrefix(out, "<!-- snapply:prod -->\n## snapply apply for `prod`\n\n| applied | unchanged |") {
				t.Errorf("markdown does not start with the marker, title and summary:\n%.300s", out)
			}
			if !strings.Contains(out, "**Apply FAILED: ") {
				t.Errorf("markdown lacks the closing line:\n%.1000s", out)
			}
			var got string
			switch {
			case strings.Contains(out, " more | | | |\n"):
				got = rows
			case strings.Contains(out, "objects omitted: too large"):
				got = details
			case strings.Contains(out, "_diff omitted: too large"):
				got = diffs
			default:
				got = fits
			}
			if got != tc.want {
				t.Fatalf("size limit met by %s, want %s", got, tc.want)
			}
			switch got {
			case fits:
				var whole bytes.Buffer
				opts.MaxBytes = 0
				if err := ResultMarkdown(&whole, tc.r, opts); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(whole.String(), out); diff != "" {
					t.Errorf("a report within the limit changed (-want +got):\n%s", diff)
				}
			case diffs:
				// Only as many diffs as needed are left out, from the end.
				if !strings.Contains(out, "```diff\n") || len(out) < limit-2*2000 {
					t.Errorf("%d bytes: too much was left out", len(out))
				}
				if strings.LastIndex(out, "```diff\n") > strings.Index(out, "_diff omitted") {
					t.Error("a diff is kept after one was left out")
				}
			case details, rows:
				// Every row stays while details can make room.
				shown := strings.Count(out, "| **failed** | `")
				if got == details && shown != len(changedRefs(tc.r.Plan)) {
					t.Errorf("%d rows, want %d", shown, len(changedRefs(tc.r.Plan)))
				}
				if got == rows && strings.Contains(out, "<details>") {
					t.Error("details kept although rows were cut")
				}
			}
		})
	}

	opts := prodResultOptions()
	opts.MaxBytes = 100
	var buf bytes.Buffer
	if err := ResultMarkdown(&buf, sampleResult(), opts); err == nil || buf.Len() != 0 {
		t.Errorf("limit below the summary: error %v, %d bytes written", err, buf.Len())
	}
}

// TestResultJSONContract pins the keys and types consumers rely on.
func TestResultJSONContract(t *testing.T) {
	var buf bytes.Buffer
	r := sampleResult()
	if err := ResultJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	checkKeys(t, "result", doc, map[string]kind{
		"plan": obj, "summary": obj, "records": arr, "interrupted": boolean, "duration": str, "ok": boolean,
	})
	if doc["duration"] != "12.3s" || doc["ok"] != false || doc["interrupted"] != false {
		t.Errorf("duration %v, ok %v, interrupted %v; want 12.3s, false, false", doc["duration"], doc["ok"], doc["interrupted"])
	}

	// The plan is the plan's own JSON, key for key.
	var planBuf bytes.Buffer
	if err := JSON(&planBuf, r.Plan); err != nil {
		t.Fatal(err)
	}
	var planDoc map[string]any
	if err := json.Unmarshal(planBuf.Bytes(), &planDoc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(planDoc, doc["plan"]); diff != "" {
		t.Errorf("plan in the result (-want +got):\n%s", diff)
	}

	summary, _ := doc["summary"].(map[string]any)
	if diff := cmp.Diff(map[string]any{
		"applied": 3.0, "unchanged": 2.0, "pruned": 1.0, "failed": 1.0, "notAttempted": 2.0, "notReady": 1.0,
	}, summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}

	records, _ := doc["records"].([]any)
	if len(records) != len(r.Records) {
		t.Fatalf("%d records, want every object of the plan (%d), unchanged ones included", len(records), len(r.Records))
	}
	outcomes := map[string]bool{}
	for _, o := range []apply.Outcome{apply.Applied, apply.Unchanged, apply.Pruned, apply.Failed, apply.NotAttempted} {
		outcomes[string(o)] = true
	}
	for i, item := range records {
		rec, _ := item.(map[string]any)
		where := fmt.Sprintf("records[%d]", i)
		checkKeys(t, where, rec, map[string]kind{
			"ref": obj, "source": obj, "action": str, "outcome": str, "error": str, "wave": str,
			"readiness": str, "readinessMessage": str, "replanned": boolean, "durationMs": num,
		})
		ref, _ := rec["ref"].(map[string]any)
		checkKeys(t, where+".ref", ref, map[string]kind{"group": str, "version": str, "kind": str, "namespace": str, "name": str})
		source, _ := rec["source"].(map[string]any)
		checkKeys(t, where+".source", source, map[string]kind{"file": str, "line": num})
		if o, _ := rec["outcome"].(string); !outcomes[o] {
			t.Errorf("%s: unknown outcome %q", where, o)
		}
	}
	deploy, _ := records[7].(map[string]any)
	if diff := cmp.Diff(map[string]any{
		"ref":    map[string]any{"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "prod", "name": "web"},
		"source": map[string]any{"file": "apps/prod/all.yaml", "line": 27.0},
		"action": "update", "outcome": "applied", "error": "", "wave": "workloads",
		"readiness": "InProgress", "readinessMessage": "Available: 2/3", "replanned": false, "durationMs": 57.0,
	}, deploy); diff != "" {
		t.Errorf("records[7] (-want +got):\n%s", diff)
	}
	skipped, _ := records[1].(map[string]any)
	if skipped["outcome"] != "not-attempted" || skipped["error"] != "not pruned: some objects were not applied" {
		t.Errorf("records[1] = %v, want a prune not attempted with its reason", skipped)
	}
}

func TestResultJSONEmptyListsAreNotNull(t *testing.T) {
	var buf bytes.Buffer
	if err := ResultJSON(&buf, &apply.Result{Plan: &plan.Plan{}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"records": []`, `"changes": []`, `"ok": true`, `"duration": "0s"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("empty result: output lacks %s:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "null") {
		t.Errorf("output holds null:\n%s", buf.String())
	}
}

func TestResultRenderersReturnWriteErrorsAndRejectNil(t *testing.T) {
	render := map[string]func(r *apply.Result) error{
		"text":     func(r *apply.Result) error { return ResultText(failWriter{}, r, DefaultTextOptions()) },
		"markdown": func(r *apply.Result) error { return ResultMarkdown(failWriter{}, r, DefaultResultMarkdownOptions()) },
		"json":     func(r *apply.Result) error { return ResultJSON(failWriter{}, r) },
	}
	for name, fn := range render {
		if err := fn(sampleResult()); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s: error %v, want the writer's error", name, err)
		}
		if err := fn(nil); err == nil {
			t.Errorf("%s: no error for a nil result", name)
		}
		if err := fn(&apply.Result{}); err == nil {
			t.Errorf("%s: no error for a result without a plan", name)
		}
	}
}
