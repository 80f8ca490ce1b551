package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/store"
)

// historyRows runs `snapply history` and returns its rows (header first),
// each cut into its cells.
func historyRows(t *testing.T, db string) [][]string {
	t.Helper()
	r := runRaw(t, "history", "--store", db)
	if r.code != 0 {
		t.Fatalf("history: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	gap := regexp.MustCompile(`\s{2,}`)
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(r.stdout, "\n"), "\n") {
		rows = append(rows, gap.Split(strings.TrimSpace(l), -1))
	}
	return rows
}

// records returns n records with the given outcome.
func records(outcome string, n int) []store.Record {
	var out []store.Record
	for i := range n {
		out = append(out, store.Record{Ref: object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: outcome + string(rune('a'+i))}, Outcome: outcome})
	}
	return out
}

func TestHistoryColumns(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name    string
		source  store.Source
		run     *store.Run // nil: the snapshots of a plan, no run recorded
		commit  string
		runCell string
		changes string
	}{{
		name:    "applied and pruned",
		source:  store.Source{Commit: sha, RunID: "123", RunAttempt: "2"},
		run:     &store.Run{Records: append(append(records("applied", 3), records("pruned", 1)...), records("unchanged", 2)...)},
		commit:  "0123456789ab",
		runCell: "123/2",
		changes: "3 applied, 1 pruned, 0 failed",
	}, {
		name:    "failures",
		source:  store.Source{Commit: "abc", RunID: "123"},
		run:     &store.Run{Records: append(append(records("applied", 1), records("failed", 1)...), records("not-attempted", 2)...)},
		commit:  "abc",
		runCell: "123",
		changes: "1 applied, 0 pruned, 1 failed, 2 not attempted",
	}, {
		name:    "interrupted",
		run:     &store.Run{Interrupted: true, Records: append(records("applied", 1), records("not-attempted", 1)...)},
		commit:  "-",
		runCell: "-",
		changes: "1 applied, 0 pruned, 0 failed, 1 not attempted (interrupted)",
	}, {
		name:    "nothing to do",
		run:     &store.Run{Records: records("unchanged", 2)},
		commit:  "-",
		runCell: "-",
		changes: "0 applied, 0 pruned, 0 failed",
	}, {
		name:    "a plan",
		source:  store.Source{Commit: sha, RunID: "9", RunAttempt: "1", PR: 7},
		commit:  "0123456789ab",
		runCell: "9/1",
		changes: "-",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			db, err := store.Open(path, store.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			objs := []*unstructured.Unstructured{obj(t, configMapA)}
			kinds := []store.Kind{store.Before}
			if tt.run != nil {
				kinds = []store.Kind{store.Before, store.Desired, store.After}
			}
			var ids []string
			for _, k := range kinds {
				m, err := db.PutSnapshot(ctx, store.Meta{Kind: k, Source: tt.source}, objs)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, m.ID)
			}
			if tt.run != nil {
				run := *tt.run
				run.Before, run.Desired, run.After, run.Source = ids[0], ids[1], ids[2], tt.source
				if err := db.PutRun(ctx, run); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}

			rows := historyRows(t, path)
			if diff := cmp.Diff([]string{"ID", "KIND", "CREATED", "OBJECTS", "COMMIT", "RUN", "CHANGES", "SOURCE"}, rows[0]); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
			if len(rows) != 1+len(kinds) {
				t.Fatalf("%d rows, want %d: %q", len(rows)-1, len(kinds), rows)
			}
			for i, row := range rows[1:] {
				if len(row) != 8 {
					t.Fatalf("row %q: want 8 cells", row)
				}
				want := []string{ids[i], string(kinds[i]), row[2], "1", tt.commit, tt.runCell, tt.changes, row[7]}
				if diff := cmp.Diff(want, row); diff != "" {
					t.Errorf("row %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestHistoryAfterTwoApplies(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	v1 := manifests(t, ns, map[string]string{"cm.yaml": twoConfigMaps})
	v2 := manifests(t, ns, map[string]string{"cm.yaml": strings.Replace(strings.Split(twoConfigMaps, "---\n")[0], `k: "1"`, `k: "10"`, 1)})
	commits := []string{strings.Repeat("1", 40), strings.Repeat("2", 40)}

	t.Setenv("GITHUB_RUN_ATTEMPT", "1")
	t.Setenv("GITHUB_SHA", commits[0])
	t.Setenv("GITHUB_RUN_ID", "100")
	if r := snapply(t, "plan", v1, "--store", db, "--name", ns, "--inventory-namespace", ns, "-q"); r.code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Setenv("GITHUB_RUN_ID", "101")
	if r := applyIn(t, ns, db, v1); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Setenv("GITHUB_SHA", commits[1])
	t.Setenv("GITHUB_RUN_ID", "102")
	if r := applyIn(t, ns, db, v2); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	rows := historyRows(t, db)
	var got [][]string
	for _, row := range rows[1:] {
		got = append(got, []string{row[1], row[4], row[5], row[6]}) // KIND COMMIT RUN CHANGES
	}
	c1, c2 := commits[0][:12], commits[1][:12]
	want := [][]string{
		{"before", c1, "100/1", "-"},
		{"before", c1, "101/1", "2 applied, 0 pruned, 0 failed"},
		{"desired", c1, "101/1", "2 applied, 0 pruned, 0 failed"},
		{"after", c1, "101/1", "2 applied, 0 pruned, 0 failed"},
		{"before", c2, "102/1", "1 applied, 1 pruned, 0 failed"},
		{"desired", c2, "102/1", "1 applied, 1 pruned, 0 failed"},
		{"after", c2, "102/1", "1 applied, 1 pruned, 0 failed"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history: KIND COMMIT RUN CHANGES (-want +got):\n%s", diff)
	}

	// The JSON output is the snapshots' metadata as before, each with the
	// keys it always had; the snapshots of a run add "run".
	r := runRaw(t, "history", "--store", db, "-o", "json")
	if r.code != 0 {
		t.Fatalf("history -o json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var metas []store.Meta
	if err := json.Unmarshal([]byte(r.stdout), &metas); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	wantMetas, err := s.Snapshots()
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantMetas, metas); diff != "" {
		t.Errorf("history -o json as []store.Meta (-want +got):\n%s", diff)
	}
	var entries []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		for _, k := range []string{"id", "created", "kind", "cluster", "source", "count"} {
			if _, ok := e[k]; !ok {
				t.Errorf("entry %d lacks %q: %v", i, k, e)
			}
		}
	}
	if _, ok := entries[0]["run"]; ok {
		t.Errorf("the plan's snapshot has a run: %v", entries[0])
	}
	runs := storeRuns(t, db)
	wantRun := map[string]any{
		"before": runs[1].Before, "desired": runs[1].Desired, "after": runs[1].After,
		"applied": 1.0, "unchanged": 0.0, "pruned": 1.0, "failed": 0.0, "notAttempted": 0.0, "interrupted": false,
	}
	if diff := cmp.Diff(wantRun, entries[6]["run"]); diff != "" {
		t.Errorf("run of the last snapshot (-want +got):\n%s", diff)
	}
}

func TestHistoryEmptyStore(t *testing.T) {
	db, _ := storeOf(t)
	r := runRaw(t, "history", "--store", db, "-o", "json")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("exit %d, stdout %q; want []", r.code, r.stdout)
	}
}
