package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/engine"
)

func newLockCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:         "lock PATH",
		Annotations: map[string]string{offline: "true"},
		Short:       "Pin the digests of the remote Helm charts PATH uses in snapply.lock",
		Long: `lock renders PATH without a cluster, downloads every remote Helm chart its
kustomizations list (helmCharts entries with a repo: an HTTP chart repository
or an oci:// registry, each pinned to an exact version) into the chart cache,
and writes their SHA-256 digests into snapply.lock next to each
kustomization that lists one. Commit the lock file: plan and apply refuse a
remote chart that is not in it, or whose content no longer matches it, and
never change it themselves.`,
		Example: `  snapply lock overlays/prod`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e := &engine.Engine{}
			files, err := e.LockCharts(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if len(files) == 0 {
				_, err = fmt.Fprintf(g.io.Out, "%s uses no remote Helm chart: no lock file written\n", args[0])
				return err
			}
			wd, _ := os.Getwd()
			for _, f := range files {
				if rel, err := filepath.Rel(wd, f); err == nil && !strings.HasPrefix(rel, "..") {
					f = rel
				}
				if _, err := fmt.Fprintf(g.io.Out, "wrote %s\n", f); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
