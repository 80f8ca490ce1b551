package cli

import (
	"errors"

	"github.com/sethvargo/go-githubactions"
	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/action"
	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/github"
)

func newActionCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "action",
		Short: "Run as a GitHub Actions step (reads the INPUT_* and GITHUB_* environment)",
		Long: `action is the entrypoint of the snapply GitHub Action. It reads the action's
inputs and the event, and plans (pull_request), applies (push to the default
branch), rolls back, retries, or does nothing with a notice. It writes the
job summary, the step outputs and a sticky pull-request comment, and
annotates invalid manifests. See action.yml for the inputs and outputs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a := githubactions.New(githubactions.WithWriter(g.io.Out))
			cfg, err := action.Load(a)
			if err == nil {
				err = action.Run(cmd.Context(), a, cfg, g.actionDeps(cfg))
			}
			var exit *action.ExitError
			if err != nil && !(errors.As(err, &exit) && exit.Err == nil) {
				// One annotation for the cause; the exit code says the rest.
				a.Errorf("%s", action.OneLine(err.Error()))
				return &ExitError{Code: ExitCode(err)}
			}
			return err
		},
	}
}

// actionDeps builds what action.Run needs: engines for the kubeconfig the
// action writes, the GitHub client, and the log.
func (g *globals) actionDeps(cfg *action.Config) action.Deps {
	g.color = "never" // the log is no terminal
	gh, ghErr := github.NewClient(cfg.Inputs.GitHubToken, cfg.Event.APIURL, cfg.Event.Repository)
	deps := action.Deps{
		NewEngine: func(kubeconfig, context string) *engine.Engine {
			if kubeconfig != "" {
				g.kube.KubeConfig = &kubeconfig
			}
			if context != "" {
				g.kube.Context = &context
			}
			return g.newEngine()
		},
		GitHubErr: ghErr,
		Log:       g.io.Out,
		Progress:  g.progress,
	}
	if ghErr == nil {
		deps.GitHub = gh
	}
	return deps
}
