package action

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"
)

// fixture is one payload of fixtures/events with the variables the runner
// sets beside it.
type fixture struct {
	file, event, ref, sha string
}

var (
	prOpened      = fixture{"pull_request-opened.json", "pull_request", "refs/pull/42/merge", "5d1b9e2c7a4f80e6b3c21d09f8a7e6d5c4b3a291"}
	prSynchronize = fixture{"pull_request-synchronize.json", "pull_request", "refs/pull/42/merge", "6e2c0f3d8b5a91f7c4d32e1a09b8f7e6d5c4b3a2"}
	prFork        = fixture{"pull_request-fork.json", "pull_request", "refs/pull/57/merge", "7f3d1a4e9c6b02a8d5e43f2b1ac9a8f7e6d5c4b3"}
	pushMain      = fixture{"push-main.json", "push", "refs/heads/main", "e8f1a2b3c4d5e6f708192a3b4c5d6e7f80912a3b"}
	pushBranch    = fixture{"push-branch.json", "push", "refs/heads/bump-web", "b7d2e4f6a8c0b1d3e5f7a9c1b3d5e7f9a1c3e5f7"}
	dispatch      = fixture{"workflow_dispatch-rollback.json", "workflow_dispatch", "refs/heads/main", "e8f1a2b3c4d5e6f708192a3b4c5d6e7f80912a3b"}
	issueComment  = fixture{"issue_comment.json", "issue_comment", "refs/heads/main", "e8f1a2b3c4d5e6f708192a3b4c5d6e7f80912a3b"}
)

// runner simulates a GitHub Actions runner: an environment, the files it
// hands a step, and the step's standard output.
type runner struct {
	env map[string]string
	out bytes.Buffer
}

// newRunner returns a runner for the fixture f, with GITHUB_OUTPUT and
// GITHUB_STEP_SUMMARY as empty temporary files.
func newRunner(t *testing.T, f fixture) *runner {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "fixtures", "events", f.file))
	if err != nil {
		t.Fatal(err)
	}
	r := newBareRunner(t)
	dir := t.TempDir()
	for k, v := range map[string]string{
		"GITHUB_ACTIONS":      "true",
		"GITHUB_EVENT_NAME":   f.event,
		"GITHUB_EVENT_PATH":   path,
		"GITHUB_REF":          f.ref,
		"GITHUB_SHA":          f.sha,
		"GITHUB_REPOSITORY":   "acme/platform-deploy",
		"GITHUB_RUN_ID":       "9876543210",
		"GITHUB_RUN_ATTEMPT":  "1",
		"GITHUB_RUN_NUMBER":   "77",
		"GITHUB_WORKFLOW":     "deploy",
		"GITHUB_ACTOR":        "alice",
		"GITHUB_SERVER_URL":   "https://github.com",
		"GITHUB_API_URL":      "https://api.github.com",
		"GITHUB_WORKSPACE":    filepath.Join(dir, "workspace"),
		"GITHUB_OUTPUT":       touch(t, filepath.Join(dir, "output")),
		"GITHUB_STEP_SUMMARY": touch(t, filepath.Join(dir, "step_summary")),
	} {
		r.env[k] = v
	}
	return r
}

// newBareRunner returns a runner with an empty environment: snapply run
// as a plain CLI.
func newBareRunner(t *testing.T) *runner {
	t.Helper()
	return &runner{env: map[string]string{}}
}

func touch(t *testing.T, path string) string {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// input sets the input name as the runner does: INPUT_<NAME>.
func (r *runner) input(name, value string) *runner {
	r.env[inputEnv(name)] = value
	return r
}

// payload replaces the event payload by the fixture's, edited by edit.
func (r *runner) payload(t *testing.T, edit func(map[string]any)) *runner {
	t.Helper()
	data, err := os.ReadFile(r.env["GITHUB_EVENT_PATH"])
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	edit(p)
	if data, err = json.Marshal(p); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r.env["GITHUB_EVENT_PATH"] = path
	return r
}

func (r *runner) action() *githubactions.Action {
	return githubactions.New(
		githubactions.WithGetenv(func(k string) string { return r.env[k] }),
		githubactions.WithWriter(&r.out),
	)
}

// lines returns what the step printed, line by line.
func (r *runner) lines() []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(r.out.Bytes()))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// masks returns the values the step masked, unescaped as the runner does.
func (r *runner) masks() []string {
	var out []string
	for _, l := range r.lines() {
		if m, ok := strings.CutPrefix(l, "::add-mask::"); ok {
			out = append(out, unescapeData(m))
		}
	}
	return out
}

// unescapeData undoes the escaping of a workflow command's message.
func unescapeData(s string) string {
	return strings.NewReplacer("%0D", "\r", "%0A", "\n", "%25", "%").Replace(s)
}

// readOutputs parses the GITHUB_OUTPUT file in the heredoc format
// go-githubactions writes: name<<DELIM, the value, DELIM.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] == "" {
			continue
		}
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %d: %q is not name<<DELIMITER", i+1, lines[i])
		}
		var value []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			value = append(value, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("GITHUB_OUTPUT: output %s has no closing %s", name, delim)
		}
		if _, dup := out[name]; dup {
			t.Fatalf("GITHUB_OUTPUT: output %s written twice", name)
		}
		out[name] = strings.Join(value, "\n")
	}
	return out
}

// unmasked returns the lines of the step's output that show one of secrets
// (single-line strings) before a mask hides it there: a mask of the secret
// itself, or of a string of the line that holds it.
func unmasked(r *runner, secrets []string) []string {
	var masked, bad []string
	for _, l := range r.lines() {
		if m, ok := strings.CutPrefix(l, "::add-mask::"); ok {
			masked = append(masked, unescapeData(m))
			continue
		}
		for _, s := range secrets {
			if strings.Contains(l, s) && !slices.ContainsFunc(masked, func(m string) bool {
				return strings.Contains(m, s) && strings.Contains(l, m)
			}) {
				bad = append(bad, l)
				break
			}
		}
	}
	return bad
}
