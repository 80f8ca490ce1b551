package action

import (
	"fmt"
	"strings"
)

// Mode is what a run does.
type Mode string

// The modes a run resolves to.
const (
	// ModePlan renders, snapshots and plans; nothing in the cluster changes.
	ModePlan Mode = "plan"
	// ModeApply plans and applies.
	ModeApply Mode = "apply"
	// ModeRollback applies the state recorded by a past run.
	ModeRollback Mode = "rollback"
	// ModeDrift compares the cluster with git and keeps the drift issue
	// of the environment; nothing in the cluster changes.
	ModeDrift Mode = "drift"
	// ModeNone does nothing; Config.Notice says why.
	ModeNone Mode = "none"
)

// modeAuto is the mode input's default: the event decides.
const modeAuto = "auto"

func validMode(m string) bool {
	switch Mode(m) {
	case modeAuto, ModePlan, ModeApply, ModeRollback, ModeDrift, ModeNone:
		return true
	}
	return false
}

// resolveMode decides what the run does (see Load). For ModeNone the
// string says why, in one line.
func resolveMode(in Inputs, ev Event, credentials bool) (Mode, string, error) {
	switch Mode(in.Mode) {
	case ModePlan, ModeApply, ModeDrift:
		return Mode(in.Mode), "", nil
	case ModeRollback:
		if in.RollbackTo == "" {
			return "", "", fmt.Errorf("input %s: mode rollback needs the run to roll back to", InputRollbackTo)
		}
		return ModeRollback, "", nil
	case ModeNone:
		return ModeNone, "the mode input is none: nothing to do", nil
	}

	const choose = "set the mode input to plan, apply, rollback or drift to run anyway"
	switch ev.Name {
	case "":
		return ModeNone, "not running in GitHub Actions (GITHUB_EVENT_NAME is unset): " + choose, nil
	case EventPullRequest, EventPullRequestTarget:
		if ev.Action == "closed" {
			return ModeNone, fmt.Sprintf("pull request #%d is closed: nothing to plan (a push to the default branch applies what was merged)", ev.PR), nil
		}
		if ev.Fork && ev.Name == EventPullRequest && in.Kubeconfig == "" && !credentials {
			from := "a deleted fork"
			if ev.HeadRepository != "" {
				from = "the fork " + ev.HeadRepository
			}
			return ModeNone, fmt.Sprintf("pull request #%d comes from %s: GitHub gives its pull_request workflow no secrets and no OIDC token, and no cluster credentials were found (no kubeconfig input, no KUBECONFIG file, no ~/.kube/config, not in a cluster); nothing to do", ev.PR, from), nil
		}
		return ModePlan, "", nil
	case EventPush:
		if ev.DefaultBranch == "" {
			return ModeNone, "push: the event payload names no default branch, so snapply cannot tell whether to apply; " + choose, nil
		}
		if ev.Ref == "refs/heads/"+ev.DefaultBranch {
			return ModeApply, "", nil
		}
		what := "push to " + strings.TrimPrefix(ev.Ref, "refs/heads/")
		if strings.HasPrefix(ev.Ref, "refs/tags/") {
			what = "push of tag " + strings.TrimPrefix(ev.Ref, "refs/tags/")
		}
		return ModeNone, fmt.Sprintf("%s: snapply applies only pushes to the default branch %s; nothing to do", what, ev.DefaultBranch), nil
	case EventSchedule:
		return ModeDrift, "", nil
	case EventWorkflowDispatch:
		if ev.DispatchMode == string(ModeDrift) {
			return ModeDrift, "", nil
		}
		if in.RollbackTo != "" {
			return ModeRollback, "", nil
		}
		return ModeNone, fmt.Sprintf("workflow_dispatch needs the %s input to roll back; to re-apply %s instead, set the mode input to apply", InputRollbackTo, displayRef(ev.Ref)), nil
	}
	return ModeNone, fmt.Sprintf("snapply does nothing on %s events in mode auto (it plans on pull_request, applies on a push to the default branch, rolls back on workflow_dispatch with %s, checks drift on schedule): %s", ev.Name, InputRollbackTo, choose), nil
}

// displayRef shortens "refs/heads/main" to "main".
func displayRef(ref string) string {
	if ref == "" {
		return "the ref"
	}
	return strings.TrimPrefix(ref, "refs/heads/")
}
