package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/version"
)

func newVersionCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of snapply",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(g.io.Out, "snapply %s (commit %s, %s, %s/%s)\n", version.Version, version.Commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
