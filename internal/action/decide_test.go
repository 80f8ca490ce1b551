package action

import (
	"testing"

	"github.com/snapply/snapply/internal/apply"
)

func TestClassifyApply(t *testing.T) {
	inv := func(run, commit string) *apply.Inventory {
		return &apply.Inventory{Annotations: map[string]string{apply.LastRunIDAnnotation: run, apply.LastCommitAnnotation: commit}}
	}
	const live, old = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	for _, tc := range []struct {
		name string
		ev   Event
		inv  *apply.Inventory
		want Kind
		line string
	}{
		{"first apply, no inventory", Event{RunID: "100", RunAttempt: "1", SHA: live}, nil, KindApply, ""},
		{"a newer run applies", Event{RunID: "101", RunAttempt: "1", SHA: live}, inv("100", old), KindApply, ""},
		{"re-run of the run that last applied is a retry", Event{RunID: "100", RunAttempt: "2", SHA: live}, inv("100", live), KindRetry, "retry of run 100 (attempt 2)"},
		{"re-run of a newer run that never recorded is a retry", Event{RunID: "101", RunAttempt: "3", SHA: live}, inv("100", old), KindRetry, "retry of run 101 (attempt 3)"},
		{"re-run of an older run is a rollback", Event{RunID: "90", RunAttempt: "2", SHA: old}, inv("100", live), KindRollback, "rollback from aaaaaaaaaaaa to bbbbbbbbbbbb"},
		{"an older run that starts late is a rollback", Event{RunID: "90", RunAttempt: "1", SHA: old}, inv("100", live), KindRollback, "rollback from aaaaaaaaaaaa to bbbbbbbbbbbb"},
		{"re-run without a record is a retry", Event{RunID: "90", RunAttempt: "2", SHA: old}, &apply.Inventory{}, KindRetry, "retry of run 90 (attempt 2)"},
		{"rollback with an unknown live commit", Event{RunID: "90", RunAttempt: "1", SHA: old}, inv("100", ""), KindRollback, "rollback from an unknown commit to bbbbbbbbbbbb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ClassifyApply(tc.ev, tc.inv)
			if got.Kind != tc.want || got.Line != tc.line {
				t.Errorf("ClassifyApply = %+v, want kind %s line %q", got, tc.want, tc.line)
			}
		})
	}
}

func TestCommentKeys(t *testing.T) {
	if got := CommentKey("prod", ModePlan); got != "prod" {
		t.Errorf("plan key = %q, want prod", got)
	}
	for _, m := range []Mode{ModeApply, ModeRollback} {
		if got := CommentKey("prod", m); got != "prod:apply" {
			t.Errorf("%s key = %q, want prod:apply", m, got)
		}
	}
}

// The artifact a rollback-to run downloads is the one the apply run named.
func TestArtifactPrefixMatchesArtifactName(t *testing.T) {
	apply := &Config{Inputs: Inputs{Name: "prod/eu"}, Event: Event{RunID: "4242", RunAttempt: "3"}}
	name := apply.ArtifactName()
	later := &Config{Inputs: Inputs{Name: "prod/eu", RollbackTo: "4242"}, Event: Event{RunID: "5000", RunAttempt: "1"}}
	prefix := later.ArtifactPrefix("4242")
	if name != "snapply-prod-eu-4242-3" || prefix != "snapply-prod-eu-4242-" {
		t.Fatalf("name %q, prefix %q", name, prefix)
	}
	if len(name) < len(prefix) || name[:len(prefix)] != prefix {
		t.Errorf("artifact %q does not start with the rollback's prefix %q", name, prefix)
	}
}

func TestSourceLine(t *testing.T) {
	ev := Event{Repository: "acme/deploy", ServerURL: "https://github.com", RunID: "77", RunAttempt: "2"}
	got := SourceLine(ev, "5d1b9e2c7a4f80e6b3c21d09f8a7e6d5c4b3a291", "https://github.com/acme/deploy/actions/runs/77/attempts/2")
	want := "Commit [`5d1b9e2`](https://github.com/acme/deploy/commit/5d1b9e2c7a4f80e6b3c21d09f8a7e6d5c4b3a291) · [run 77 (attempt 2)](https://github.com/acme/deploy/actions/runs/77/attempts/2)"
	if got != want {
		t.Errorf("SourceLine =\n%s\nwant\n%s", got, want)
	}
	if got := SourceLine(Event{}, "", ""); got != "" {
		t.Errorf("outside Actions: %q, want empty", got)
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"a\n  b   c\n\nd ": "a; b c; d",
		"single":           "single",
		"":                 "",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
