package action

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// Config is everything a run needs to know about the runner: the inputs,
// the event, and the mode the two resolve to.
type Config struct {
	// Inputs are the parsed inputs. RollbackTo falls back to the
	// workflow_dispatch input of the same name.
	Inputs Inputs
	// Event is the GitHub context.
	Event Event
	// Mode is what the run does.
	Mode Mode
	// Notice says, in one line, why nothing runs when Mode is ModeNone.
	Notice string
}

// Load reads the inputs (INPUT_*) and the GitHub context (GITHUB_*, and the
// event payload at GITHUB_EVENT_PATH), and resolves the mode. An explicit
// mode input is taken as given (rollback needs rollback-to). In mode auto:
//
//   - pull_request, pull_request_target: plan; nothing for a closed pull
//     request, nor for a pull_request from a fork when no credentials can
//     be found at all: no kubeconfig input and no AmbientCredentials
//     (GitHub gives such runs no secrets and no OIDC token);
//   - push to the default branch: apply; a push elsewhere: nothing;
//   - workflow_dispatch with the dispatch input mode: drift: drift; with
//     rollback-to: rollback; without either, nothing: a manual run
//     re-applies only when the mode input says apply;
//   - schedule: drift (the cluster compared with git, and the drift issue
//     of the environment kept);
//   - any other event, or none (outside GitHub Actions): nothing.
//
// When nothing runs, Notice says why. Load masks the github-token input
// and store-key inputs before it returns. Every bad input is reported as one line naming it;
// the errors are joined.
func Load(a *githubactions.Action) (*Config, error) {
	in, inErr := readInputs(a)
	if in.GitHubToken != "" {
		a.AddMask(in.GitHubToken)
	}
	if in.StoreKey != "" {
		a.AddMask(in.StoreKey)
	}
	ev, p, evErr := readEvent(a)
	if err := errors.Join(inErr, evErr); err != nil {
		return nil, err
	}
	if in.RollbackTo == "" && ev.Name == EventWorkflowDispatch {
		in.RollbackTo = strings.TrimSpace(p.dispatchInputs[InputRollbackTo])
	}
	if ev.Name == EventWorkflowDispatch {
		ev.DispatchMode = strings.ToLower(strings.TrimSpace(p.dispatchInputs[InputMode]))
	}
	mode, notice, err := resolveMode(in, ev, AmbientCredentials(a.Getenv))
	if err != nil {
		return nil, err
	}
	return &Config{Inputs: in, Event: ev, Mode: mode, Notice: notice}, nil
}

// AmbientCredentials reports whether the runner has cluster credentials of
// its own, as kubectl would find them: a KUBECONFIG file that exists (what
// a cloud sign-in step such as aws eks update-kubeconfig wrote), else
// ~/.kube/config, else the in-cluster service account (a runner in
// Kubernetes).
func AmbientCredentials(getenv func(string) string) bool {
	if kc := getenv("KUBECONFIG"); kc != "" {
		for _, p := range filepath.SplitList(kc) {
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				return true
			}
		}
		return false
	}
	if home := getenv("HOME"); home != "" {
		if fi, err := os.Stat(filepath.Join(home, ".kube", "config")); err == nil && !fi.IsDir() {
			return true
		}
	}
	if getenv("KUBERNETES_SERVICE_HOST") != "" {
		_, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/token")
		return err == nil
	}
	return false
}

// StoreFile is the store file to open: the store input resolved against the
// workspace (GITHUB_WORKSPACE) when it is relative. The store-path output
// reports Inputs.Store instead, which an upload step resolves against the
// workspace on the host (a container action sees the workspace at another
// path).
func (c *Config) StoreFile() string {
	if filepath.IsAbs(c.Inputs.Store) || c.Event.Workspace == "" {
		return c.Inputs.Store
	}
	return filepath.Join(c.Event.Workspace, c.Inputs.Store)
}

// ArtifactName names the store artifact of this run attempt:
// "snapply-<name>-<run id>-<attempt>", with the characters an artifact
// name may not hold replaced by "-". Parts the environment lacks (outside
// GitHub Actions) are left out.
func (c *Config) ArtifactName() string {
	parts := []string{"snapply", c.Inputs.Name}
	if c.Event.RunID != "" {
		parts = append(parts, c.Event.RunID)
		attempt := c.Event.RunAttempt
		if attempt == "" {
			attempt = "1"
		}
		parts = append(parts, attempt)
	}
	return artifactNameReplacer.Replace(strings.Join(parts, "-"))
}

// artifactNameReplacer replaces the characters actions/upload-artifact
// refuses in a name.
var artifactNameReplacer = strings.NewReplacer(
	`"`, "-", ":", "-", "<", "-", ">", "-", "|", "-", "*", "-", "?", "-",
	"\r", "-", "\n", "-", `\`, "-", "/", "-",
)

// RunURL is the web address of this run, "<server>/<owner/repo>/actions/runs/<id>",
// with "/attempts/<n>" when the attempt is a re-run (n > 1). It is empty
// outside GitHub Actions.
func (c *Config) RunURL() string {
	ev := c.Event
	if ev.Repository == "" || ev.RunID == "" {
		return ""
	}
	u := strings.TrimSuffix(ev.ServerURL, "/") + "/" + ev.Repository + "/actions/runs/" + ev.RunID
	if n, err := strconv.Atoi(ev.RunAttempt); err == nil && n > 1 {
		u += "/attempts/" + ev.RunAttempt
	}
	return u
}
