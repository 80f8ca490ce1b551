package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snapply/snapply/internal/github/githubtest"
)

// A pull request's plan job has no store of its own: it downloads the
// store artifact of the run that last applied the inventory and plans the
// objects that record proves unchanged without a dry run. Without the
// artifact it dry-runs everything, and says so in one notice.
func TestActionPlanUsesTheLastApplysArtifact(t *testing.T) {
	ns := env.Namespace(t)
	cases := []struct {
		name     string
		artifact func(s *githubtest.Server, store []byte)
		header   string
		notice   string
	}{
		{"present", func(s *githubtest.Server, store []byte) { s.AddArtifact(2101, "snapply-"+ns+"-2101-1", store, false) },
			"0 dry runs, 2 known unchanged", ""},
		{"expired", func(s *githubtest.Server, store []byte) { s.AddArtifact(2101, "snapply-"+ns+"-2101-1", store, true) },
			"2 dry runs, 0 known unchanged", `expired`},
		{"absent", func(s *githubtest.Server, store []byte) {},
			"2 dry runs, 0 known unchanged", `run 2101 has no artifact`},
	}
	// Run 2101 applies; its store is what it uploads.
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	if res := r.run("push-main", map[string]string{"GITHUB_RUN_ID": "2101"}); res.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	stored, err := os.ReadFile(filepath.Join(r.workspace, "snapply.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A fresh job for the pull request: no store in the workspace.
			pr := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
			pr.t = t
			tc.artifact(pr.gh, stored)
			res := pr.run("pull_request-opened", map[string]string{"GITHUB_RUN_ID": "2102"})
			if res.code != 0 {
				t.Fatalf("plan: exit %d\n%s%s", res.code, res.stdout, res.stderr)
			}
			if !strings.Contains(res.stdout, "; "+tc.header) {
				t.Errorf("the plan does not say %q:\n%s", tc.header, res.stdout)
			}
			if s, _ := os.ReadFile(pr.summary); !strings.Contains(string(s), "Checked: "+tc.header+".") {
				t.Errorf("the job summary does not say %q:\n%s", tc.header, s)
			}
			notices := 0
			for _, line := range strings.Split(res.stdout, "\n") {
				if strings.HasPrefix(line, "::notice::no record of the last apply") {
					notices++
					if tc.notice == "" || !strings.Contains(line, tc.notice) {
						t.Errorf("notice %q, want one saying %q", line, tc.notice)
					}
				}
			}
			if want := map[bool]int{true: 0, false: 1}[tc.notice == ""]; notices != want {
				t.Errorf("%d notices about the record, want %d:\n%s", notices, want, res.stdout)
			}
			downloaded := strings.Contains(res.stdout+res.stderr, "downloaded the store of run 2101")
			if downloaded != (tc.notice == "") {
				t.Errorf("downloaded the store: %v:\n%s", downloaded, res.stderr)
			}
		})
	}
}

// After an apply, a plan reports each object verified by the record;
// --revalidate dry-runs them all again.
func TestPlanKnownAndRevalidate(t *testing.T) {
	ns := env.Namespace(t)
	dir := manifests(t, ns, map[string]string{"app.yaml": configMaps})
	db := filepath.Join(t.TempDir(), "s.db")
	if r := applyIn(t, ns, db, dir); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	verified := func(extra ...string) []string {
		t.Helper()
		r := snapply(t, append([]string{"plan", dir, "--store", db, "--name", ns, "--inventory-namespace", ns, "-o", "json"}, extra...)...)
		if r.code != 0 {
			t.Fatalf("plan %v: exit %d\n%s", extra, r.code, r.stderr)
		}
		var got struct {
			Changes []struct {
				Verified *string `json:"verified"`
			} `json:"changes"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range got.Changes {
			if c.Verified == nil {
				t.Fatalf("a change has no verified key:\n%s", r.stdout)
			}
			out = append(out, *c.Verified)
		}
		return out
	}
	if got := verified(); strings.Join(got, ",") != "record,record" {
		t.Errorf("plan after apply: verified %v, want record for both", got)
	}
	if got := verified("--revalidate"); strings.Join(got, ",") != "dry-run,dry-run" {
		t.Errorf("plan --revalidate: verified %v, want dry-run for both", got)
	}
}
