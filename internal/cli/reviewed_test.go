package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/snapply/snapply/internal/github/githubtest"
)

// mergeSHA is the commit of fixtures/events/push-main.json.
const mergeSHA = "e8f1a2b3c4d5e6f708192a3b4c5d6e7f80912a3b"

// reviewedRunner plans on pull request #42 and returns the runner, with #42
// merged as the push-main fixture's commit.
func reviewedRunner(t *testing.T) *runner {
	t.Helper()
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	if res := r.run("pull_request-opened", nil); res.code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	r.gh.AddPull(githubtest.Pull{Number: pullRequestFixture, HeadSHA: "a3c9f1e07b2d4c6e8f0a1b2c3d4e5f60718293a4", MergedAt: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), MergeCommitSHA: mergeSHA})
	return r
}

func TestActionAppliesTheReviewedPlan(t *testing.T) {
	r := reviewedRunner(t)
	res := r.run("push-main", nil)
	if res.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	const want = "Applies the plan reviewed in #42."
	if s, _ := os.ReadFile(r.summary); !strings.Contains(string(s), want) {
		t.Errorf("job summary does not say %q:\n%s", want, s)
	}
	if got := r.output("reviewed-plan"); got != "same" {
		t.Errorf("reviewed-plan output %q, want same", got)
	}
	var said bool
	for _, c := range r.gh.Comments(pullRequestFixture) {
		said = said || strings.Contains(c.Body, want)
	}
	if !said {
		t.Errorf("no comment on #42 says %q", want)
	}
}

// Main moved between the review and the merge: the apply says so and
// names what differs.
func TestActionSaysThePlanDiffersFromTheReviewed(t *testing.T) {
	r := reviewedRunner(t)
	r.write(map[string]string{"app.yaml": strings.Replace(configMaps, `k: "2"`, `k: "moved"`, 1)})
	res := r.run("push-main", nil)
	if res.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	s, _ := os.ReadFile(r.summary)
	for _, want := range []string{"Differs from the plan reviewed in #42", "now: create configmap/b -n " + r.ns, "reviewed: create configmap/b -n " + r.ns} {
		if !strings.Contains(string(s), want) {
			t.Errorf("job summary does not say %q:\n%s", want, s)
		}
	}
	if got := r.output("reviewed-plan"); got != "differs" {
		t.Errorf("reviewed-plan output %q, want differs", got)
	}
	if got := resourceVersions(t, r.ns); len(got) != 2 {
		t.Errorf("without require-reviewed-plan the apply goes on: live %v", got)
	}
}

// With require-reviewed-plan, a plan that differs changes nothing and the
// step fails, saying how to go on.
func TestActionRequireReviewedPlanRefusesADifferentPlan(t *testing.T) {
	r := reviewedRunner(t)
	r.write(map[string]string{"app.yaml": strings.Replace(configMaps, `k: "2"`, `k: "moved"`, 1)})
	res := r.run("push-main", map[string]string{"INPUT_REQUIRE-REVIEWED-PLAN": "true"})
	if res.code != 1 {
		t.Fatalf("apply of an unreviewed plan: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	if got := resourceVersions(t, r.ns); len(got) != 0 {
		t.Errorf("the cluster changed: %v", got)
	}
	var why string
	for _, c := range r.gh.Comments(pullRequestFixture) {
		if strings.Contains(c.Body, "Not applied") {
			why = c.Body
		}
	}
	for _, want := range []string{"Differs from the plan reviewed in #42", "re-run the plan on the pull request", "apply with the input off"} {
		if !strings.Contains(why, want) {
			t.Errorf("comment does not say %q:\n%s", want, why)
		}
	}
	if got := r.output("reviewed-plan"); got != "differs" {
		t.Errorf("reviewed-plan output %q, want differs", got)
	}
	// Without a reviewed plan at all: refused too.
	r2 := newRunner(t, env.Namespace(t), map[string]string{"app.yaml": configMaps})
	if res := r2.run("push-main", map[string]string{"INPUT_REQUIRE-REVIEWED-PLAN": "true"}); res.code != 1 || r2.output("reviewed-plan") != "missing" {
		t.Errorf("no reviewed plan: exit %d, reviewed-plan %q; want 1 and missing\n%s", res.code, r2.output("reviewed-plan"), res.stdout)
	}
}

// Run as root into a workspace another user owns (the Docker image in a
// container job, docker run with a mounted checkout), the action leaves a
// store that the workspace's owner can read, for the artifact upload.
func TestActionStoreBelongsToTheWorkspaceOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	r := newRunner(t, env.Namespace(t), map[string]string{"app.yaml": configMaps})
	if err := os.Chown(r.workspace, 1001, 1001); err != nil {
		t.Fatal(err)
	}
	if res := r.run("pull_request-opened", nil); res.code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	fi, err := os.Stat(filepath.Join(r.workspace, r.output("store-path")))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 1001 || fi.Mode().Perm()&0o400 == 0 {
		t.Errorf("store owned by uid %d with mode %v; want uid 1001 able to read it", st.Uid, fi.Mode())
	}
}
