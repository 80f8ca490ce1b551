package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/snapply/snapply/internal/github"
	"github.com/snapply/snapply/internal/github/githubtest"
)

// runner is a simulated GitHub Actions runner for one job: a workspace with
// the manifests, the runner's files, and the fake GitHub API.
type runner struct {
	t         *testing.T
	ns        string
	workspace string
	gh        *githubtest.Server
	outputs   string
	summary   string
	token     string
}

func newRunner(t *testing.T, ns string, files map[string]string) *runner {
	t.Helper()
	r := &runner{t: t, ns: ns, gh: githubtest.NewServer(t), token: "ghs_test-token-value-123"}
	r.workspace = manifests(t, ns, files)
	return r
}

// write replaces the workspace's manifests (a new push to the branch).
func (r *runner) write(files map[string]string) {
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(r.workspace, name), []byte(strings.ReplaceAll(text, "NS", r.ns)), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// run runs `snapply action` for the event in fixtures/events/FIXTURE.json.
func (r *runner) run(fixture string, inputs map[string]string) result {
	t := r.t
	t.Helper()
	payload, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "events", fixture+".json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	eventPath := filepath.Join(dir, "event.json")
	if err := os.WriteFile(eventPath, payload, 0o644); err != nil {
		t.Fatal(err)
	}
	r.outputs, r.summary = filepath.Join(dir, "output"), filepath.Join(dir, "summary")
	for _, f := range []string{r.outputs, r.summary} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var ev struct {
		Ref   string `json:"ref"`
		After string `json:"after"`
	}
	_ = json.Unmarshal(payload, &ev)
	event := strings.SplitN(fixture, "-", 2)[0]
	kubeconfig, err := os.ReadFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": eventPath,
		"GITHUB_REPOSITORY": "o/r", "GITHUB_SHA": ev.After, "GITHUB_REF": ev.Ref,
		"GITHUB_RUN_ID": "1001", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_WORKFLOW": "deploy", "GITHUB_ACTOR": "octocat",
		"GITHUB_SERVER_URL": "https://github.example", "GITHUB_API_URL": r.gh.URL, "GITHUB_WORKSPACE": r.workspace,
		"GITHUB_OUTPUT": r.outputs, "GITHUB_STEP_SUMMARY": r.summary,
		"INPUT_PATH": ".", "INPUT_KUBECONFIG": string(kubeconfig), "INPUT_NAME": r.ns,
		"INPUT_INVENTORY-NAMESPACE": r.ns, "INPUT_GITHUB-TOKEN": r.token, "INPUT_STORE": "snapply.db",
		"INPUT_TIMEOUT": "20s", "INPUT_WAIT": "false",
	}
	for k, v := range inputs {
		vars[k] = v
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
	return runRaw(t, "action")
}

func (r *runner) output(name string) string {
	b, err := os.ReadFile(r.outputs)
	if err != nil {
		r.t.Fatal(err)
	}
	// go-githubactions writes name<<DELIMITER\nvalue\nDELIMITER.
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, name+"<<") && i+1 < len(lines) {
			return lines[i+1]
		}
	}
	return ""
}

func (r *runner) writes() []string {
	var out []string
	for _, req := range r.gh.Requests() {
		if req.Method != "GET" {
			out = append(out, req.Method+" "+req.Path)
		}
	}
	return out
}

// pullRequestFixture is the PR of fixtures/events/pull_request-*.json.
const pullRequestFixture = 42

func TestActionPlanCommentsOnThePullRequest(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})

	// The fixtures' repository is public: with a store key the store is
	// uploaded (encrypted).
	res := r.run("pull_request-opened", map[string]string{"INPUT_STORE-KEY": testKeyA})
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	comments := r.gh.Comments(pullRequestFixture)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "snapply plan for `"+ns+"`") || !strings.Contains(comments[0].Body, "configmap/a -n "+ns) {
		t.Fatalf("comments after the PR opened: %+v", comments)
	}
	if got := r.output("has-changes"); got != "true" {
		t.Errorf("has-changes = %q", got)
	}
	if got := r.output("artifact-name"); got != "snapply-"+ns+"-1001-1" {
		t.Errorf("artifact-name = %q", got)
	}
	if got := r.output("comment-url"); got != comments[0].HTMLURL {
		t.Errorf("comment-url = %q, want %q", got, comments[0].HTMLURL)
	}
	var summary map[string]int
	if err := json.Unmarshal([]byte(r.output("summary")), &summary); err != nil || summary["create"] != 2 {
		t.Errorf("summary output %q (%v)", r.output("summary"), err)
	}
	if s, _ := os.ReadFile(r.summary); !strings.Contains(string(s), "configmap/b -n "+ns) {
		t.Errorf("job summary lacks the plan:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(r.workspace, "snapply.db")); err != nil {
		t.Errorf("no store in the workspace: %v", err)
	}
	if !strings.Contains(res.stdout, "::group::") {
		t.Errorf("log has no groups:\n%s", res.stdout)
	}

	// The comment names the planned commit (the PR's head) and the run.
	for _, want := range []string{"Commit [`a3c9f1e`](https://github.example/o/r/commit/a3c9f1e07b2d4c6e8f0a1b2c3d4e5f60718293a4)", "[run 1001](https://github.example/o/r/actions/runs/1001)"} {
		if !strings.Contains(comments[0].Body, want) {
			t.Errorf("comment does not name %q:\n%s", want, comments[0].Body)
		}
	}
	// The same run again, nothing changed: no edit.
	before := len(r.writes())
	if res := r.run("pull_request-opened", nil); res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if w := r.writes(); len(w) != before {
		t.Errorf("unchanged plan wrote to GitHub: %v", w[before:])
	}
	// Pushed again with the same plan: the comment now names the new head.
	if res := r.run("pull_request-synchronize", nil); res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	before = len(r.writes())
	// Pushed a change: the same comment is edited in place.
	r.write(map[string]string{"app.yaml": strings.Replace(configMaps, `k: "1"`, `k: "changed"`, 1)})
	if res := r.run("pull_request-synchronize", nil); res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	after := r.gh.Comments(pullRequestFixture)
	if len(after) != 1 || after[0].ID != comments[0].ID || !strings.Contains(after[0].Body, `k: "changed"`) && !strings.Contains(after[0].Body, "k: changed") {
		t.Fatalf("comment not edited in place: %+v", after)
	}
	if w := r.writes(); len(w) != before+1 || !strings.HasPrefix(w[len(w)-1], "PATCH ") {
		t.Errorf("writes %v, want one PATCH", w[before:])
	}
}

func TestActionApplyOnMergeCommentsOnThePullRequest(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	r.gh.AddPull(githubtest.Pull{Number: 42, Title: "deploy", HeadSHA: "aaaa", MergedAt: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), MergeCommitSHA: "e8f1a2b3c4d5e6f708192a3b4c5d6e7f80912a3b"})

	res := r.run("push-main", nil)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if got := resourceVersions(t, ns); len(got) != 2 {
		t.Fatalf("the push did not apply: %v\n%s", got, res.stdout)
	}
	comments := r.gh.Comments(42)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "snapply apply for `"+ns+"`") || !strings.Contains(comments[0].Body, "applied") {
		t.Fatalf("merged PR comments: %+v", comments)
	}
	if s, _ := os.ReadFile(r.summary); !strings.Contains(string(s), "Apply") && !strings.Contains(string(s), "apply") {
		t.Errorf("job summary lacks the result:\n%s", s)
	}
}

func TestActionHugePlanIsSplit(t *testing.T) {
	ns := env.Namespace(t)
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: big-%d, namespace: NS}\ndata:\n", i)
		for j := range 40 {
			fmt.Fprintf(&b, "  key-%d: %q\n", j, strings.Repeat(fmt.Sprintf("value %d %d ", i, j), 8))
		}
	}
	r := newRunner(t, ns, map[string]string{"big.yaml": b.String()})
	if res := r.run("pull_request-opened", nil); res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	comments := r.gh.Comments(pullRequestFixture)
	if len(comments) < 2 {
		t.Fatalf("%d comments, want the plan split over several", len(comments))
	}
	all := ""
	for i, c := range comments {
		if len(c.Body) > github.MaxCommentBytes {
			t.Errorf("comment %d is %d bytes, over GitHub's limit", i, len(c.Body))
		}
		all += c.Body
	}
	if !strings.Contains(comments[0].Body, "| create |") {
		t.Errorf("the first comment does not start with the summary:\n%.500s", comments[0].Body)
	}
	for i := range 60 {
		if !strings.Contains(all, fmt.Sprintf("configmap/big-%d -n %s", i, ns)) {
			t.Errorf("big-%d is in no comment", i)
		}
	}
}

func TestActionForkGetsANotice(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	res := r.run("pull_request-fork", map[string]string{"INPUT_KUBECONFIG": "", "INPUT_GITHUB-TOKEN": ""})
	if res.code != 0 || !strings.Contains(res.stdout, "::notice") || !strings.Contains(strings.ToLower(res.stdout), "fork") {
		t.Fatalf("exit %d, want 0 with a notice about the fork\n%s%s", res.code, res.stdout, res.stderr)
	}
	if reqs := r.gh.Requests(); len(reqs) != 0 {
		t.Errorf("a fork's run called GitHub: %v", reqs)
	}
}

func TestActionMissingPermissionWarns(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	r.gh.Forbid(fmt.Sprintf("POST /repos/o/r/issues/%d/comments", pullRequestFixture))
	res := r.run("pull_request-opened", nil)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0 (a warning, not a failure)\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "::warning") || !strings.Contains(res.stdout, "pull-requests: write") {
		t.Errorf("no warning naming the permission:\n%s", res.stdout)
	}
}

func TestActionInvalidManifestIsAnnotated(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, namespace: NS}\nspec: {x: 1}\n"})
	res := r.run("pull_request-opened", nil)
	if res.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "::error file=app.yaml,line=") {
		t.Errorf("no error annotation on the file:\n%s", res.stdout)
	}
	if len(r.gh.Comments(pullRequestFixture)) != 1 {
		t.Error("the plan with an invalid object must still be commented")
	}
}

func TestActionNeverLeaksSecrets(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"secret.yaml": secretManifest("s3cr3t-data-value")})
	r.gh.AddPull(githubtest.Pull{Number: 42, HeadSHA: "aaaa", MergedAt: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), MergeCommitSHA: "e8f1a2b3c4d5e6f708192a3b4c5d6e7f80912a3b"})
	var logs []string
	// A store key, as a passphrase: it must not leave either.
	const storeKey = "leak-test store key passphrase"
	for _, fixture := range []string{"pull_request-opened", "push-main"} {
		res := r.run(fixture, map[string]string{"INPUT_STORE-KEY": storeKey})
		if res.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", fixture, res.code, res.stdout, res.stderr)
		}
		logs = append(logs, res.stdout, res.stderr)
		out, _ := os.ReadFile(r.outputs)
		sum, _ := os.ReadFile(r.summary)
		logs = append(logs, string(out), string(sum))
	}
	r.write(map[string]string{"secret.yaml": secretManifest("s3cr3t-changed-value")})
	res := r.run("pull_request-synchronize", nil)
	logs = append(logs, res.stdout, res.stderr)
	for _, req := range r.gh.Requests() {
		logs = append(logs, req.Body)
	}
	kubeconfig, _ := os.ReadFile(env.Kubeconfig)
	secrets := append([]string{storeKey}, secretValues...)
	for _, l := range strings.Split(string(kubeconfig), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), ": "); ok && (strings.HasSuffix(k, "-data") || k == "token") {
			secrets = append(secrets, v)
		}
	}
	all := strings.Join(logs, "\n")
	for _, s := range secrets {
		// The log may name a value only in an ::add-mask:: command, which
		// the runner consumes.
		for _, line := range strings.Split(all, "\n") {
			if strings.Contains(line, s) && !strings.HasPrefix(line, "::add-mask::") {
				t.Errorf("a secret (%.12s...) left snapply: %.200s", s, line)
				break
			}
		}
	}
}

func TestActionRerunOfAnOlderApplyIsARollback(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	merged := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	r.gh.AddPull(githubtest.Pull{Number: 41, HeadSHA: "a1", MergedAt: merged, MergeCommitSHA: "1111111111111111111111111111111111111111"})
	r.gh.AddPull(githubtest.Pull{Number: 42, HeadSHA: "a2", MergedAt: merged, MergeCommitSHA: "2222222222222222222222222222222222222222"})

	// Run 1001 applies commit 1111 (v1), run 1002 applies 2222 (v2).
	if res := r.run("push-main", map[string]string{"GITHUB_SHA": "1111111111111111111111111111111111111111", "GITHUB_RUN_ID": "1001"}); res.code != 0 {
		t.Fatalf("v1: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if got := r.output("rollback"); got != "false" {
		t.Errorf("first apply: rollback output %q", got)
	}
	r.write(map[string]string{"app.yaml": strings.Replace(configMaps, `k: "1"`, `k: "v2"`, 1)})
	if res := r.run("push-main", map[string]string{"GITHUB_SHA": "2222222222222222222222222222222222222222", "GITHUB_RUN_ID": "1002"}); res.code != 0 {
		t.Fatalf("v2: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	// "Re-run jobs" on run 1001: attempt 2 of the older run, its checkout.
	r.write(map[string]string{"app.yaml": configMaps})
	res := r.run("push-main", map[string]string{"GITHUB_SHA": "1111111111111111111111111111111111111111", "GITHUB_RUN_ID": "1001", "GITHUB_RUN_ATTEMPT": "2"})
	if res.code != 0 {
		t.Fatalf("re-run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	want := "rollback from 222222222222 to 111111111111"
	if !strings.Contains(res.stdout, want) {
		t.Errorf("log does not say %q:\n%s", want, res.stdout)
	}
	if got := r.output("rollback"); got != "true" {
		t.Errorf("rollback output %q, want true", got)
	}
	if s, _ := os.ReadFile(r.summary); !strings.Contains(string(s), want) {
		t.Errorf("job summary does not say %q", want)
	}
	var onOriginal bool
	for _, c := range r.gh.Comments(41) {
		onOriginal = onOriginal || strings.Contains(c.Body, want)
	}
	if !onOriginal {
		t.Errorf("the original PR #41 has no comment saying %q: %+v", want, r.gh.Comments(41))
	}
	cm, err := clientset(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "a", metav1.GetOptions{})
	if err != nil || cm.Data["k"] != "1" {
		t.Errorf("cluster not rolled back to v1: %v %v", cm.Data, err)
	}
}

func TestActionRollbackToARunRestoresItsArtifact(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	// Run 2001 applies v1 and its store becomes that run's artifact, under
	// the name the run computed (the artifact-name output, which the
	// action's upload step uses). The fixtures' repository is public.
	if res := r.run("push-main", map[string]string{"GITHUB_RUN_ID": "2001", "INPUT_ALLOW-PUBLIC-STORE": "true"}); res.code != 0 {
		t.Fatalf("v1: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if r.output("upload-store") != "true" {
		t.Fatalf("run 2001 does not upload its store: upload-store = %q", r.output("upload-store"))
	}
	name := r.output("artifact-name")
	if name == "" {
		t.Fatal("run 2001 has no artifact-name output")
	}
	// The artifact holds what the upload step uploads: the store-path and
	// plan-html outputs.
	files := map[string][]byte{}
	for _, out := range []string{"store-path", "plan-html"} {
		if p := r.output(out); p != "" {
			files[p] = mustRead(t, filepath.Join(r.workspace, p))
		}
	}
	if len(files) != 2 {
		t.Fatalf("run 2001 uploads %d files, want the store and the HTML plan", len(files))
	}
	r.gh.AddArtifactArchive(2001, name, githubtest.Zip(files), false)
	// Run 2002 applies v2: b is gone, a changed, c added.
	r.write(map[string]string{"app.yaml": strings.Replace(strings.Split(configMaps, "---\n")[0], `k: "1"`, `k: "v2"`, 1) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: NS}\n"})
	if res := r.run("push-main", map[string]string{"GITHUB_RUN_ID": "2002"}); res.code != 0 {
		t.Fatalf("v2: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// A fresh job (no store in the workspace) rolls back to run 2001.
	if err := os.Remove(filepath.Join(r.workspace, "snapply.db")); err != nil {
		t.Fatal(err)
	}
	res := r.run("workflow_dispatch-rollback", map[string]string{"INPUT_ROLLBACK-TO": "2001", "GITHUB_RUN_ID": "2003"})
	if res.code != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	got := resourceVersions(t, ns)
	if _, ok := got["c"]; ok || len(got) != 2 {
		t.Errorf("after the rollback the members are %v, want a and b only", got)
	}
	if cm, err := clientset(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "a", metav1.GetOptions{}); err != nil || cm.Data["k"] != "1" {
		t.Errorf("a = %v (%v), want v1's value", cm.Data, err)
	}
	if r.output("rollback") != "true" || !strings.Contains(res.stdout, "rollback to run 2001") {
		t.Errorf("the run does not say it is a rollback:\n%s", res.stdout)
	}
	// The artifact's redirect to a signed URL was followed without the token.
	signed := 0
	for _, req := range r.gh.Requests() {
		if strings.Contains(req.Path, "signed") {
			signed++
			if req.Header.Get("Authorization") != "" {
				t.Errorf("the token was sent to the signed URL: %s", req.Path)
			}
		}
	}
	if signed != 1 {
		t.Errorf("%d downloads from the signed URL, want 1", signed)
	}
}

func TestActionRollbackErrors(t *testing.T) {
	ns := env.Namespace(t)
	cases := []struct {
		name  string
		setup func(*githubtest.Server)
		want  string
	}{
		{"expired", func(s *githubtest.Server) { s.AddArtifact(3001, "snapply-"+ns+"-3001-1", []byte("x"), true) }, "expired"},
		{"missing", func(s *githubtest.Server) {}, "has no artifact"},
		{"forbidden", func(s *githubtest.Server) { s.Forbid("GET /repos/o/r/actions/runs/3001/artifacts") }, `"actions: read"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
			tc.setup(r.gh)
			res := r.run("workflow_dispatch-rollback", map[string]string{"INPUT_ROLLBACK-TO": "3001"})
			if res.code != 1 || !strings.Contains(res.stdout, "::error") || !strings.Contains(res.stdout, tc.want) {
				t.Fatalf("exit %d, want 1 with an error saying %q\n%s%s", res.code, tc.want, res.stdout, res.stderr)
			}
			if got := resourceVersions(t, ns); len(got) != 0 {
				t.Errorf("a failed rollback changed the cluster: %v", got)
			}
		})
	}
}

// A re-run of the run that last applied is a retry of that commit, not a
// rollback.
func TestActionRerunOfTheLastApplyIsARetry(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	const sha = "1111111111111111111111111111111111111111"
	if res := r.run("push-main", map[string]string{"GITHUB_SHA": sha, "GITHUB_RUN_ID": "1001"}); res.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res := r.run("push-main", map[string]string{"GITHUB_SHA": sha, "GITHUB_RUN_ID": "1001", "GITHUB_RUN_ATTEMPT": "2"})
	if res.code != 0 {
		t.Fatalf("re-run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	const want = "retry of run 1001 (attempt 2)"
	if !strings.Contains(res.stdout, want) || strings.Contains(res.stdout, "rollback from") {
		t.Errorf("log does not say %q (and only that):\n%s", want, res.stdout)
	}
	if got := r.output("rollback"); got != "false" {
		t.Errorf("rollback output %q, want false", got)
	}
	if s, _ := os.ReadFile(r.summary); !strings.Contains(string(s), want) {
		t.Errorf("job summary does not say %q:\n%s", want, s)
	}
}

// The snapshots of a plan run from a pull request record its number, and
// history shows it.
func TestActionHistoryShowsThePullRequest(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	if res := r.run("pull_request-opened", nil); res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	db := filepath.Join(r.workspace, "snapply.db")
	res := runRaw(t, "history", "--store", db, "-o", "json")
	var snaps []struct {
		Source struct {
			PR int `json:"pr"`
		} `json:"source"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &snaps); err != nil || len(snaps) == 0 {
		t.Fatalf("history -o json: %v\n%s%s", err, res.stdout, res.stderr)
	}
	for _, s := range snaps {
		if s.Source.PR != pullRequestFixture {
			t.Errorf("snapshot source PR %d, want %d", s.Source.PR, pullRequestFixture)
		}
	}
	if text := runRaw(t, "history", "--store", db); !strings.Contains(text.stdout, fmt.Sprintf("#%d", pullRequestFixture)) {
		t.Errorf("history does not show PR #%d:\n%s", pullRequestFixture, text.stdout)
	}
}
