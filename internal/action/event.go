package action

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/google/go-github/v62/github"
	"github.com/sethvargo/go-githubactions"
)

// The events snapply acts on.
const (
	EventPullRequest       = "pull_request"
	EventPullRequestTarget = "pull_request_target"
	EventPush              = "push"
	EventWorkflowDispatch  = "workflow_dispatch"
	EventSchedule          = "schedule"
)

// Event is the run's GitHub context: the GITHUB_* variables and what the
// event payload (GITHUB_EVENT_PATH) adds to them.
type Event struct {
	// Name is the event that started the workflow (GITHUB_EVENT_NAME).
	Name string
	// Action is the payload's activity type, like "opened", "synchronize"
	// or "closed" for a pull request; empty for push and workflow_dispatch.
	Action string
	// Repository is "owner/repo" (GITHUB_REPOSITORY, else the payload's).
	Repository string
	// SHA is the commit the workflow runs on (GITHUB_SHA): for a pull
	// request, the merge commit GitHub made of its head and base.
	SHA string
	// Ref is the ref the workflow runs on (GITHUB_REF), like
	// "refs/heads/main" or "refs/pull/42/merge".
	Ref string
	// DefaultBranch is the repository's default branch, from the payload.
	DefaultBranch string
	// RunID, RunAttempt, Workflow and Actor identify the run
	// (GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_WORKFLOW, GITHUB_ACTOR).
	RunID, RunAttempt, Workflow, Actor string
	// ServerURL, APIURL and Workspace are GITHUB_SERVER_URL, GITHUB_API_URL
	// and GITHUB_WORKSPACE (github.com and api.github.com when unset).
	ServerURL, APIURL, Workspace string
	// PR is the pull request's number; 0 when the event is not about one.
	PR int
	// PRTitle is the pull request's title.
	PRTitle string
	// Fork reports that the pull request's head lives in another repository
	// than its base (or in one since deleted): its pull_request workflow gets
	// no secrets and a read-only token.
	Fork bool
	// HeadRepository is "owner/repo" of the pull request's head; empty when
	// that repository was deleted.
	HeadRepository string
	// HeadSHA is the commit the change is about: the pull request's head,
	// the pushed commit (after), else SHA.
	HeadSHA string
	// Public reports that the payload says the repository is public
	// (repository.visibility "public", else repository.private false):
	// anyone signed in to GitHub can download its workflow artifacts.
	Public bool
	// DispatchMode is the workflow_dispatch input "mode", lower case:
	// "drift" makes a manual run a drift check in mode auto.
	DispatchMode string
}

// payload is what readEvent takes from the event payload beyond Event.
type payload struct {
	// dispatchInputs are a workflow_dispatch's inputs, as strings.
	dispatchInputs map[string]string
}

// readEvent reads the GITHUB_* variables and decodes the event payload into
// go-github's types.
func readEvent(a *githubactions.Action) (Event, payload, error) {
	var p payload
	ctx, err := a.Context()
	if err != nil {
		return Event{}, p, fmt.Errorf("runner environment: %w", err)
	}
	ev := Event{
		Name:       ctx.EventName,
		Repository: ctx.Repository,
		SHA:        ctx.SHA,
		Ref:        ctx.Ref,
		Workflow:   ctx.Workflow,
		Actor:      ctx.Actor,
		ServerURL:  ctx.ServerURL,
		APIURL:     ctx.APIURL,
		Workspace:  ctx.Workspace,
		HeadSHA:    ctx.SHA,
	}
	if ctx.RunID > 0 {
		ev.RunID = strconv.FormatInt(ctx.RunID, 10)
	}
	if ctx.RunAttempt > 0 {
		ev.RunAttempt = strconv.FormatInt(ctx.RunAttempt, 10)
	}
	if ctx.EventPath == "" {
		return ev, p, nil
	}
	data, err := os.ReadFile(ctx.EventPath)
	if err != nil {
		return Event{}, p, fmt.Errorf("event payload %s: %w", ctx.EventPath, err)
	}
	var repo *github.Repository
	switch ev.Name {
	case EventPullRequest, EventPullRequestTarget:
		var e github.PullRequestEvent
		if err := json.Unmarshal(data, &e); err != nil {
			return Event{}, p, fmt.Errorf("event payload %s: %s: %w", ctx.EventPath, ev.Name, err)
		}
		repo = e.GetRepo()
		ev.Action = e.GetAction()
		ev.PR = e.GetNumber()
		pr := e.GetPullRequest()
		if ev.PR == 0 {
			ev.PR = pr.GetNumber()
		}
		ev.PRTitle = pr.GetTitle()
		if sha := pr.GetHead().GetSHA(); sha != "" {
			ev.HeadSHA = sha
		}
		ev.HeadRepository = pr.GetHead().GetRepo().GetFullName()
		base := pr.GetBase().GetRepo().GetFullName()
		if base == "" {
			base = repo.GetFullName()
		}
		ev.Fork = ev.HeadRepository == "" || ev.HeadRepository != base
	case EventPush:
		var e github.PushEvent
		if err := json.Unmarshal(data, &e); err != nil {
			return Event{}, p, fmt.Errorf("event payload %s: %s: %w", ctx.EventPath, ev.Name, err)
		}
		r := e.GetRepo()
		repo = &github.Repository{FullName: r.FullName, DefaultBranch: r.DefaultBranch}
		if sha := e.GetAfter(); sha != "" {
			ev.HeadSHA = sha
		}
		if ev.Ref == "" {
			ev.Ref = e.GetRef()
		}
	case EventWorkflowDispatch:
		var e github.WorkflowDispatchEvent
		if err := json.Unmarshal(data, &e); err != nil {
			return Event{}, p, fmt.Errorf("event payload %s: %s: %w", ctx.EventPath, ev.Name, err)
		}
		repo = e.GetRepo()
		if ev.Ref == "" {
			ev.Ref = e.GetRef()
		}
		if len(e.Inputs) > 0 {
			var inputs map[string]any
			if err := json.Unmarshal(e.Inputs, &inputs); err != nil {
				return Event{}, p, fmt.Errorf("event payload %s: workflow_dispatch inputs: %w", ctx.EventPath, err)
			}
			p.dispatchInputs = make(map[string]string, len(inputs))
			for k, v := range inputs {
				if v != nil {
					p.dispatchInputs[k] = fmt.Sprint(v)
				}
			}
		}
	default:
		var e struct {
			Repo *github.Repository `json:"repository,omitempty"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			return Event{}, p, fmt.Errorf("event payload %s: %s: %w", ctx.EventPath, ev.Name, err)
		}
		repo = e.Repo
	}
	if ev.Repository == "" {
		ev.Repository = repo.GetFullName()
	}
	ev.Public = publicRepository(data)
	ev.DefaultBranch = repo.GetDefaultBranch()
	return ev, p, nil
}

// publicRepository reports whether the event payload says its repository
// is public: repository.visibility is "public" or, without it,
// repository.private is false. A payload that says neither is not taken
// as public.
func publicRepository(data []byte) bool {
	var e struct {
		Repository struct {
			Private    *bool  `json:"private"`
			Visibility string `json:"visibility"`
		} `json:"repository"`
	}
	if json.Unmarshal(data, &e) != nil {
		return false
	}
	if v := e.Repository.Visibility; v != "" {
		return v == "public"
	}
	return e.Repository.Private != nil && !*e.Repository.Private
}
