package action

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadMode(t *testing.T) {
	tests := []struct {
		name   string
		runner func(t *testing.T) *runner
		want   Mode
		// notice holds strings the notice must contain; a mode other than
		// none must come without a notice.
		notice     []string
		rollbackTo string
	}{
		{
			name:   "pull request opened: plan",
			runner: func(t *testing.T) *runner { return newRunner(t, prOpened) },
			want:   ModePlan,
		},
		{
			name:   "pull request synchronize: plan",
			runner: func(t *testing.T) *runner { return newRunner(t, prSynchronize) },
			want:   ModePlan,
		},
		{
			name: "pull request closed: nothing",
			runner: func(t *testing.T) *runner {
				return newRunner(t, prOpened).payload(t, func(p map[string]any) { p["action"] = "closed" })
			},
			want:   ModeNone,
			notice: []string{"#42", "closed"},
		},
		{
			name:   "pull request from a fork without kubeconfig: nothing, says why",
			runner: func(t *testing.T) *runner { return newRunner(t, prFork) },
			want:   ModeNone,
			notice: []string{"#57", "fork bob-contrib/platform-deploy", "no secrets"},
		},
		{
			name: "pull request from a deleted fork: nothing",
			runner: func(t *testing.T) *runner {
				return newRunner(t, prFork).payload(t, func(p map[string]any) {
					p["pull_request"].(map[string]any)["head"].(map[string]any)["repo"] = nil
				})
			},
			want:   ModeNone,
			notice: []string{"#57", "deleted fork"},
		},
		{
			name: "pull request from a fork with a kubeconfig: plan",
			runner: func(t *testing.T) *runner {
				return newRunner(t, prFork).input(InputKubeconfig, testKubeconfig)
			},
			want: ModePlan,
		},
		{
			name: "pull request from a fork with a KUBECONFIG the runner signed in with: plan",
			runner: func(t *testing.T) *runner {
				r := newRunner(t, prFork)
				kc := filepath.Join(t.TempDir(), "config")
				if err := os.WriteFile(kc, []byte(testKubeconfig), 0o600); err != nil {
					t.Fatal(err)
				}
				r.env["KUBECONFIG"] = filepath.Join(t.TempDir(), "missing") + string(filepath.ListSeparator) + kc
				return r
			},
			want: ModePlan,
		},
		{
			name: "pull request from a fork with ~/.kube/config: plan",
			runner: func(t *testing.T) *runner {
				r := newRunner(t, prFork)
				home := t.TempDir()
				if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(home, ".kube", "config"), []byte(testKubeconfig), 0o600); err != nil {
					t.Fatal(err)
				}
				r.env["HOME"] = home
				return r
			},
			want: ModePlan,
		},
		{
			name: "pull request from a fork whose KUBECONFIG does not exist: nothing",
			runner: func(t *testing.T) *runner {
				r := newRunner(t, prFork)
				r.env["KUBECONFIG"] = filepath.Join(t.TempDir(), "missing")
				r.env["HOME"] = t.TempDir()
				return r
			},
			want:   ModeNone,
			notice: []string{"#57", "no cluster credentials were found"},
		},
		{
			name: "pull_request_target from a fork: plan",
			runner: func(t *testing.T) *runner {
				r := newRunner(t, prFork)
				r.env["GITHUB_EVENT_NAME"] = "pull_request_target"
				return r
			},
			want: ModePlan,
		},
		{
			name:   "push to the default branch: apply",
			runner: func(t *testing.T) *runner { return newRunner(t, pushMain) },
			want:   ModeApply,
		},
		{
			name:   "push to another branch: nothing",
			runner: func(t *testing.T) *runner { return newRunner(t, pushBranch) },
			want:   ModeNone,
			notice: []string{"push to bump-web", "default branch main"},
		},
		{
			name: "push of a tag: nothing",
			runner: func(t *testing.T) *runner {
				r := newRunner(t, pushMain)
				r.env["GITHUB_REF"] = "refs/tags/v1.2.0"
				return r
			},
			want:   ModeNone,
			notice: []string{"tag v1.2.0"},
		},
		{
			name: "push to a repository whose default branch is not main",
			runner: func(t *testing.T) *runner {
				return newRunner(t, pushMain).payload(t, func(p map[string]any) {
					p["repository"].(map[string]any)["default_branch"] = "trunk"
				})
			},
			want:   ModeNone,
			notice: []string{"push to main", "default branch trunk"},
		},
		{
			name: "push without a default branch in the payload: nothing",
			runner: func(t *testing.T) *runner {
				return newRunner(t, pushMain).payload(t, func(p map[string]any) {
					delete(p["repository"].(map[string]any), "default_branch")
				})
			},
			want:   ModeNone,
			notice: []string{"no default branch"},
		},
		{
			name:       "workflow_dispatch with rollback-to in the event: rollback",
			runner:     func(t *testing.T) *runner { return newRunner(t, dispatch) },
			want:       ModeRollback,
			rollbackTo: "1234567890",
		},
		{
			name:       "workflow_dispatch: the rollback-to input wins over the event's",
			runner:     func(t *testing.T) *runner { return newRunner(t, dispatch).input(InputRollbackTo, "555") },
			want:       ModeRollback,
			rollbackTo: "555",
		},
		{
			name: "workflow_dispatch without rollback-to: nothing",
			runner: func(t *testing.T) *runner {
				return newRunner(t, dispatch).payload(t, func(p map[string]any) { p["inputs"] = map[string]any{} })
			},
			want:   ModeNone,
			notice: []string{"workflow_dispatch needs the rollback-to input", "mode input to apply"},
		},
		{
			name: "workflow_dispatch with the input mode: drift: drift",
			runner: func(t *testing.T) *runner {
				return newRunner(t, dispatch).payload(t, func(p map[string]any) { p["inputs"] = map[string]any{"mode": "Drift"} })
			},
			want: ModeDrift,
		},
		{
			name: "schedule: drift",
			runner: func(t *testing.T) *runner {
				r := newRunner(t, dispatch)
				r.env["GITHUB_EVENT_NAME"] = "schedule"
				return r
			},
			want: ModeDrift,
		},
		{
			name:   "explicit drift on a push",
			runner: func(t *testing.T) *runner { return newRunner(t, pushMain).input(InputMode, "drift") },
			want:   ModeDrift,
		},
		{
			name:   "unsupported event: nothing, names the event",
			runner: func(t *testing.T) *runner { return newRunner(t, issueComment) },
			want:   ModeNone,
			notice: []string{"issue_comment", "set the mode input"},
		},
		{
			name:   "outside GitHub Actions: nothing",
			runner: newBareRunner,
			want:   ModeNone,
			notice: []string{"not running in GitHub Actions"},
		},
		{
			name:   "explicit plan on an unsupported event",
			runner: func(t *testing.T) *runner { return newRunner(t, issueComment).input(InputMode, "plan") },
			want:   ModePlan,
		},
		{
			name:   "explicit apply on a push to another branch",
			runner: func(t *testing.T) *runner { return newRunner(t, pushBranch).input(InputMode, "apply") },
			want:   ModeApply,
		},
		{
			name:   "explicit plan on a fork pull request",
			runner: func(t *testing.T) *runner { return newRunner(t, prFork).input(InputMode, "plan") },
			want:   ModePlan,
		},
		{
			name: "explicit rollback on push",
			runner: func(t *testing.T) *runner {
				return newRunner(t, pushMain).input(InputMode, "rollback").input(InputRollbackTo, "42")
			},
			want:       ModeRollback,
			rollbackTo: "42",
		},
		{
			name:   "explicit none",
			runner: func(t *testing.T) *runner { return newRunner(t, pushMain).input(InputMode, "none") },
			want:   ModeNone,
			notice: []string{"mode input is none"},
		},
		{
			name:   "mode is case-insensitive",
			runner: func(t *testing.T) *runner { return newRunner(t, issueComment).input(InputMode, "Plan") },
			want:   ModePlan,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(tt.runner(t).action())
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if cfg.Mode != tt.want {
				t.Errorf("mode = %q, want %q (notice %q)", cfg.Mode, tt.want, cfg.Notice)
			}
			if tt.want != ModeNone && cfg.Notice != "" {
				t.Errorf("mode %s comes with the notice %q", cfg.Mode, cfg.Notice)
			}
			if tt.want == ModeNone && cfg.Notice == "" {
				t.Errorf("mode none without a notice")
			}
			if strings.Contains(cfg.Notice, "\n") {
				t.Errorf("notice spans lines: %q", cfg.Notice)
			}
			for _, s := range tt.notice {
				if !strings.Contains(cfg.Notice, s) {
					t.Errorf("notice %q does not say %q", cfg.Notice, s)
				}
			}
			if cfg.Inputs.RollbackTo != tt.rollbackTo {
				t.Errorf("rollback-to = %q, want %q", cfg.Inputs.RollbackTo, tt.rollbackTo)
			}
		})
	}
}

func TestLoadEvent(t *testing.T) {
	common := Event{
		Repository: "acme/platform-deploy",
		RunID:      "9876543210",
		RunAttempt: "1",
		Workflow:   "deploy",
		Actor:      "alice",
		ServerURL:  "https://github.com",
		APIURL:     "https://api.github.com",
		Public:     true, // the fixtures' repository is public
	}
	with := func(f func(*Event)) Event {
		e := common
		f(&e)
		return e
	}
	tests := []struct {
		fixture fixture
		want    Event
	}{
		{prOpened, with(func(e *Event) {
			e.Name, e.Action = "pull_request", "opened"
			e.SHA, e.Ref, e.DefaultBranch = prOpened.sha, prOpened.ref, "main"
			e.PR, e.PRTitle = 42, "web: bump image to 1.27.3, worker to 3 replicas"
			e.HeadRepository = "acme/platform-deploy"
			e.HeadSHA = "a3c9f1e07b2d4c6e8f0a1b2c3d4e5f60718293a4"
		})},
		{prSynchronize, with(func(e *Event) {
			e.Name, e.Action = "pull_request", "synchronize"
			e.SHA, e.Ref, e.DefaultBranch = prSynchronize.sha, prSynchronize.ref, "main"
			e.PR, e.PRTitle = 42, "web: bump image to 1.27.3, worker to 3 replicas"
			e.HeadRepository = "acme/platform-deploy"
			e.HeadSHA = "b7d2e4f6a8c0b1d3e5f7a9c1b3d5e7f9a1c3e5f7"
		})},
		{prFork, with(func(e *Event) {
			e.Name, e.Action = "pull_request", "opened"
			e.SHA, e.Ref, e.DefaultBranch = prFork.sha, prFork.ref, "main"
			e.PR, e.PRTitle = 57, "docs: fix the staging overlay's namespace"
			e.Fork, e.HeadRepository = true, "bob-contrib/platform-deploy"
			e.HeadSHA = "c1e3a5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7c9"
		})},
		{pushMain, with(func(e *Event) {
			e.Name = "push"
			e.SHA, e.Ref, e.DefaultBranch = pushMain.sha, pushMain.ref, "main"
			e.HeadSHA = "e8f1a2b3c4d5e6f708192a3b4c5d6e7f80912a3b"
		})},
		{pushBranch, with(func(e *Event) {
			e.Name = "push"
			e.SHA, e.Ref, e.DefaultBranch = pushBranch.sha, pushBranch.ref, "main"
			e.HeadSHA = "b7d2e4f6a8c0b1d3e5f7a9c1b3d5e7f9a1c3e5f7"
		})},
		{dispatch, with(func(e *Event) {
			e.Name = "workflow_dispatch"
			e.SHA, e.Ref, e.DefaultBranch = dispatch.sha, dispatch.ref, "main"
			e.HeadSHA = dispatch.sha
		})},
		{issueComment, with(func(e *Event) {
			e.Name = "issue_comment"
			e.SHA, e.Ref, e.DefaultBranch = issueComment.sha, issueComment.ref, "main"
			e.HeadSHA = issueComment.sha
		})},
	}
	for _, tt := range tests {
		t.Run(tt.fixture.file, func(t *testing.T) {
			r := newRunner(t, tt.fixture)
			cfg, err := Load(r.action())
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			want := tt.want
			want.Workspace = r.env["GITHUB_WORKSPACE"]
			if diff := cmp.Diff(want, cfg.Event); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadRepositoryFromPayload(t *testing.T) {
	r := newRunner(t, pushMain)
	delete(r.env, "GITHUB_REPOSITORY")
	cfg, err := Load(r.action())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Event.Repository != "acme/platform-deploy" {
		t.Errorf("repository = %q, want the payload's acme/platform-deploy", cfg.Event.Repository)
	}
}

func TestLoadInputs(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		cfg, err := Load(newRunner(t, pushMain).action())
		if err != nil {
			t.Fatal(err)
		}
		want := Inputs{
			Path: ".", Mode: "auto", Name: "snapply", InventoryNamespace: "default", Store: "snapply.db", UploadStore: true,
			Prune: true, Wait: true, Timeout: 5 * time.Minute, Comment: true, Scope: "namespaces",
		}
		if diff := cmp.Diff(want, cfg.Inputs); diff != "" {
			t.Errorf("inputs (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(DefaultInputs(), cfg.Inputs); diff != "" {
			t.Errorf("inputs differ from DefaultInputs (-want +got):\n%s", diff)
		}
	})
	t.Run("every input set", func(t *testing.T) {
		r := newRunner(t, pushMain)
		for name, v := range map[string]string{
			InputPath: "overlays/prod", InputMode: "apply", InputKubeconfig: testKubeconfig,
			InputContext: "prod", InputName: "prod", InputInventoryNamespace: "snapply-system",
			InputGitHubToken: "ghs_0123456789abcdefTOKEN", InputStore: "state/prod.db", InputUploadStore: "false",
			InputPrune: "false", InputWait: "False", InputTimeout: "90s", InputForceConflicts: "TRUE",
			InputAllowDestructive: "true", InputComment: "false", InputRollbackTo: " 17 ", InputScope: "Cluster",
		} {
			r.input(name, v)
		}
		cfg, err := Load(r.action())
		if err != nil {
			t.Fatal(err)
		}
		want := Inputs{
			Path: "overlays/prod", Mode: "apply", Kubeconfig: testKubeconfig, Context: "prod", Name: "prod",
			InventoryNamespace: "snapply-system", GitHubToken: "ghs_0123456789abcdefTOKEN", Store: "state/prod.db",
			UploadStore: false, Prune: false, Wait: false, Timeout: 90 * time.Second, ForceConflicts: true, AllowDestructive: true,
			Comment: false, RollbackTo: "17", Scope: "cluster",
		}
		if diff := cmp.Diff(want, cfg.Inputs); diff != "" {
			t.Errorf("inputs (-want +got):\n%s", diff)
		}
		if got, want := cfg.StoreFile(), filepath.Join(r.env["GITHUB_WORKSPACE"], "state/prod.db"); got != want {
			t.Errorf("StoreFile() = %q, want %q", got, want)
		}
	})
	t.Run("token from GITHUB_TOKEN", func(t *testing.T) {
		r := newRunner(t, pushMain)
		r.env["GITHUB_TOKEN"] = "ghs_fromTheEnvironment"
		cfg, err := Load(r.action())
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Inputs.GitHubToken != "ghs_fromTheEnvironment" {
			t.Errorf("token = %q, want GITHUB_TOKEN's", cfg.Inputs.GitHubToken)
		}
	})
	t.Run("blank kubeconfig is none", func(t *testing.T) {
		cfg, err := Load(newRunner(t, pushMain).input(InputKubeconfig, " \n ").action())
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Inputs.Kubeconfig != "" {
			t.Errorf("kubeconfig = %q, want empty", cfg.Inputs.Kubeconfig)
		}
	})
}

func TestLoadMasksTokenFirst(t *testing.T) {
	const token = "ghs_secretTokenValue123"
	r := newRunner(t, pushMain).input(InputGitHubToken, token)
	if _, err := Load(r.action()); err != nil {
		t.Fatal(err)
	}
	lines := r.lines()
	if len(lines) == 0 || lines[0] != "::add-mask::"+token {
		t.Errorf("output = %q, want the token masked first", lines)
	}
	// Masked even when other inputs are bad.
	r = newRunner(t, pushMain).input(InputGitHubToken, token).input(InputTimeout, "soon")
	if _, err := Load(r.action()); err == nil {
		t.Fatal("Load accepted timeout soon")
	}
	if diff := cmp.Diff([]string{token}, r.masks()); diff != "" {
		t.Errorf("masks (-want +got):\n%s", diff)
	}
}

func TestLoadInputErrors(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  string
	}{
		{InputTimeout, "5x", `input timeout: "5x" is not a duration: want a number with a unit, like 90s or 5m`},
		{InputTimeout, "300", `input timeout: "300" is not a duration: want a number with a unit, like 90s or 5m`},
		{InputTimeout, "-1m", `input timeout: "-1m" is not positive`},
		{InputPrune, "maybe", `input prune: "maybe" is not a boolean: want true or false`},
		{InputWait, "yes", `input wait: "yes" is not a boolean: want true or false`},
		{InputForceConflicts, "1", `input force-conflicts: "1" is not a boolean: want true or false`},
		{InputAllowDestructive, "on", `input allow-destructive: "on" is not a boolean: want true or false`},
		{InputComment, "tRUE", `input comment: "tRUE" is not a boolean: want true or false`},
		{InputMode, "deploy", `input mode: "deploy" is not a mode: want auto, plan, apply, rollback, drift or none`},
		{InputScope, "everything", `input scope: "everything" is not a scope: want managed, namespaces or cluster`},
		{InputName, "Prod_EU", `input name: "Prod_EU" is not a valid Secret name: `},
		{InputInventoryNamespace, "kube.system", `input inventory-namespace: "kube.system" is not a valid namespace name: `},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			_, err := Load(newRunner(t, pushMain).input(tt.name, tt.value).action())
			if err == nil {
				t.Fatalf("Load accepted %s=%q", tt.name, tt.value)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Errorf("error = %q, want one line starting %q", msg, tt.want)
			}
		})
	}

	t.Run("every bad input is reported", func(t *testing.T) {
		r := newRunner(t, pushMain).input(InputTimeout, "5x").input(InputPrune, "maybe").input(InputMode, "deploy")
		_, err := Load(r.action())
		if err == nil {
			t.Fatal("Load accepted three bad inputs")
		}
		lines := strings.Split(err.Error(), "\n")
		want := []string{"input mode:", "input prune:", "input timeout:"}
		if len(lines) != len(want) {
			t.Fatalf("error = %q, want %d lines", err, len(want))
		}
		for i, w := range want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("error line %d = %q, want it to start %q", i+1, lines[i], w)
			}
		}
	})

	t.Run("rollback without rollback-to", func(t *testing.T) {
		_, err := Load(newRunner(t, pushMain).input(InputMode, "rollback").action())
		if err == nil || !strings.HasPrefix(err.Error(), "input rollback-to: mode rollback needs") {
			t.Errorf("error = %v, want it to name the rollback-to input", err)
		}
	})
}

func TestLoadEventErrors(t *testing.T) {
	t.Run("missing payload", func(t *testing.T) {
		r := newRunner(t, pushMain)
		r.env["GITHUB_EVENT_PATH"] = filepath.Join(t.TempDir(), "missing.json")
		_, err := Load(r.action())
		if err == nil || !strings.Contains(err.Error(), "missing.json") {
			t.Errorf("error = %v, want one naming the payload file", err)
		}
	})
	t.Run("payload of another shape", func(t *testing.T) {
		r := newRunner(t, pushMain).payload(t, func(p map[string]any) { p["ref"] = 12 })
		_, err := Load(r.action())
		if err == nil || !strings.Contains(err.Error(), "event payload") || !strings.Contains(err.Error(), "push") {
			t.Errorf("error = %v, want one naming the push payload", err)
		}
	})
	t.Run("bad run attempt", func(t *testing.T) {
		r := newRunner(t, pushMain)
		r.env["GITHUB_RUN_ATTEMPT"] = "two"
		if _, err := Load(r.action()); err == nil {
			t.Error("Load accepted GITHUB_RUN_ATTEMPT=two")
		}
	})
}

func TestArtifactName(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"first attempt", Config{Inputs: Inputs{Name: "prod"}, Event: Event{RunID: "9876543210", RunAttempt: "1"}}, "snapply-prod-9876543210-1"},
		{"re-run", Config{Inputs: Inputs{Name: "prod"}, Event: Event{RunID: "9876543210", RunAttempt: "3"}}, "snapply-prod-9876543210-3"},
		{"no attempt counts as 1", Config{Inputs: Inputs{Name: "prod"}, Event: Event{RunID: "5"}}, "snapply-prod-5-1"},
		{"outside GitHub Actions", Config{Inputs: Inputs{Name: "snapply"}}, "snapply-snapply"},
		{"refused characters", Config{Inputs: Inputs{Name: `a/b\c:d*e?f"g<h>i|j`}, Event: Event{RunID: "1", RunAttempt: "1"}}, "snapply-a-b-c-d-e-f-g-h-i-j-1-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.ArtifactName(); got != tt.want {
				t.Errorf("ArtifactName() = %q, want %q", got, tt.want)
			}
		})
	}

	t.Run("from the runner", func(t *testing.T) {
		r := newRunner(t, pushMain).input(InputName, "prod")
		r.env["GITHUB_RUN_ATTEMPT"] = "2"
		cfg, err := Load(r.action())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := cfg.ArtifactName(), "snapply-prod-9876543210-2"; got != want {
			t.Errorf("ArtifactName() = %q, want %q", got, want)
		}
	})
}

func TestRunURL(t *testing.T) {
	ev := Event{ServerURL: "https://github.com", Repository: "acme/platform-deploy", RunID: "9876543210", RunAttempt: "1"}
	tests := []struct {
		name string
		edit func(*Event)
		want string
	}{
		{"first attempt", func(*Event) {}, "https://github.com/acme/platform-deploy/actions/runs/9876543210"},
		{"re-run", func(e *Event) { e.RunAttempt = "2" }, "https://github.com/acme/platform-deploy/actions/runs/9876543210/attempts/2"},
		{"GitHub Enterprise Server", func(e *Event) { e.ServerURL = "https://ghe.example.com/" }, "https://ghe.example.com/acme/platform-deploy/actions/runs/9876543210"},
		{"outside GitHub Actions", func(e *Event) { *e = Event{ServerURL: "https://github.com"} }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ev
			tt.edit(&e)
			c := &Config{Event: e}
			if got := c.RunURL(); got != tt.want {
				t.Errorf("RunURL() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStoreFile(t *testing.T) {
	tests := []struct {
		store, workspace, want string
	}{
		{"snapply.db", "/github/workspace", "/github/workspace/snapply.db"},
		{"state/prod.db", "/github/workspace", "/github/workspace/state/prod.db"},
		{"/var/lib/snapply.db", "/github/workspace", "/var/lib/snapply.db"},
		{"snapply.db", "", "snapply.db"},
	}
	for _, tt := range tests {
		c := &Config{Inputs: Inputs{Store: tt.store}, Event: Event{Workspace: tt.workspace}}
		if got := c.StoreFile(); got != tt.want {
			t.Errorf("StoreFile() with store %q, workspace %q = %q, want %q", tt.store, tt.workspace, got, tt.want)
		}
	}
}

func TestLoadRepositoryVisibility(t *testing.T) {
	tests := []struct {
		name string
		repo map[string]any
		want bool
	}{
		{"visibility public", map[string]any{"private": false, "visibility": "public"}, true},
		{"visibility private", map[string]any{"private": true, "visibility": "private"}, false},
		{"visibility internal", map[string]any{"private": true, "visibility": "internal"}, false},
		{"private false without visibility", map[string]any{"private": false}, true},
		{"private true without visibility", map[string]any{"private": true}, false},
		{"neither", map[string]any{}, false},
	}
	for _, tt := range tests {
		for _, f := range []fixture{prOpened, pushMain, dispatch} {
			t.Run(tt.name+"/"+f.event, func(t *testing.T) {
				r := newRunner(t, f).payload(t, func(p map[string]any) {
					repo := p["repository"].(map[string]any)
					delete(repo, "private")
					delete(repo, "visibility")
					for k, v := range tt.repo {
						repo[k] = v
					}
				})
				cfg, err := Load(r.action())
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Event.Public != tt.want {
					t.Errorf("Public = %v, want %v", cfg.Event.Public, tt.want)
				}
			})
		}
	}
}

func TestLoadMasksTheStoreKey(t *testing.T) {
	const key = "a-store-key-passphrase-for-the-mask-test"
	r := newRunner(t, pushMain).input(InputStoreKey, "  "+key+"\n").input(InputAllowPublicStore, "true")
	cfg, err := Load(r.action())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Inputs.StoreKey != key || !cfg.Inputs.AllowPublicStore {
		t.Errorf("inputs: store key %q, allow-public-store %v", cfg.Inputs.StoreKey, cfg.Inputs.AllowPublicStore)
	}
	if !slices.Contains(r.masks(), key) {
		t.Errorf("masks %q do not include the store key", r.masks())
	}
}

// The upload-store input reaches the binary: on by default, off with
// "false", and a value that is not a boolean is an error naming the input.
func TestUploadStoreInput(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
	}{{"", true}, {"true", true}, {"false", false}} {
		r := newRunner(t, pushMain)
		if tc.value != "" {
			r.input(InputUploadStore, tc.value)
		}
		cfg, err := Load(r.action())
		if err != nil {
			t.Fatalf("upload-store %q: %v", tc.value, err)
		}
		if cfg.Inputs.UploadStore != tc.want {
			t.Errorf("upload-store %q: UploadStore = %v, want %v", tc.value, cfg.Inputs.UploadStore, tc.want)
		}
	}
	if _, err := Load(newRunner(t, pushMain).input(InputUploadStore, "sometimes").action()); err == nil || !strings.Contains(err.Error(), "input upload-store") {
		t.Errorf("upload-store sometimes: %v, want an error naming the input", err)
	}
}

func TestDecideUpload(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		name       string
		private    bool
		inputs     map[string]string
		env        map[string]string
		wantUpload bool
	}{
		{name: "private repository without a key", private: true, wantUpload: true},
		{name: "public repository without a key", wantUpload: false},
		{name: "public repository with store-key", inputs: map[string]string{InputStoreKey: key}, wantUpload: true},
		{name: "public repository with SNAPPLY_STORE_KEY", env: map[string]string{"SNAPPLY_STORE_KEY": key}, wantUpload: true},
		{name: "public repository with allow-public-store", inputs: map[string]string{InputAllowPublicStore: "true"}, wantUpload: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRunner(t, pushMain).payload(t, func(p map[string]any) {
				repo := p["repository"].(map[string]any)
				repo["private"] = tt.private
				repo["visibility"] = map[bool]string{true: "private", false: "public"}[tt.private]
			})
			for k, v := range tt.inputs {
				r.input(k, v)
			}
			for k, v := range tt.env {
				r.env[k] = v
			}
			a := r.action()
			cfg, err := Load(a)
			if err != nil {
				t.Fatal(err)
			}
			ru := &run{a: a, cfg: cfg, outputs: Outputs{StorePath: cfg.Inputs.Store, ArtifactName: cfg.ArtifactName()}}
			if err := ru.readKey(); err != nil {
				t.Fatal(err)
			}
			ru.decideUpload()
			if err := SetOutputs(a, ru.outputs); err != nil {
				t.Fatal(err)
			}
			out := readOutputs(t, r.env["GITHUB_OUTPUT"])
			summary, _ := os.ReadFile(r.env["GITHUB_STEP_SUMMARY"])
			warned := slices.ContainsFunc(r.lines(), func(l string) bool {
				return strings.HasPrefix(l, "::warning::The store was not uploaded: this repository is public and no store-key is set")
			})
			if got := out[OutputUploadStore]; got != strconv.FormatBool(tt.wantUpload) {
				t.Errorf("upload-store = %q, want %v", got, tt.wantUpload)
			}
			if tt.wantUpload {
				if out[OutputArtifactName] == "" || warned || len(summary) > 0 {
					t.Errorf("uploaded: artifact-name %q, warned %v, summary %q; want a name, no warning, no summary", out[OutputArtifactName], warned, summary)
				}
				return
			}
			if out[OutputArtifactName] != "" || out[OutputStorePath] != "snapply.db" {
				t.Errorf("not uploaded: artifact-name %q (want empty), store-path %q", out[OutputArtifactName], out[OutputStorePath])
			}
			if !warned {
				t.Errorf("no warning:\n%s", strings.Join(r.lines(), "\n"))
			}
			for _, want := range []string{"store-key", "allow-public-store: true", "rollback-to"} {
				if !strings.Contains(string(summary), want) {
					t.Errorf("job summary does not say %q:\n%s", want, summary)
				}
			}
		})
	}
}
