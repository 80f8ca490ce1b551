package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/version"
)

// versionInfo is the output of `snapply version -o json`: the client's
// build, and with --server the API server's.
type versionInfo struct {
	Client version.Info  `json:"clientVersion"`
	Server *version.Info `json:"serverVersion,omitempty"`
}

func newVersionCommand(g *globals) *cobra.Command {
	var output string
	var server bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of snapply, and with --server the API server's",
		Long: `version prints snapply's version, the git commit it was built from, the Go
version that built it and its platform. With --server it also asks the API
server of the kubeconfig's cluster for its version; when the server cannot
be reached it prints the client's version and exits 1.

The JSON output (-o json) is {"clientVersion": {"version", "commit",
"goVersion", "platform"}, "serverVersion": {the same keys}}, the second only
with --server.`,
		Example: `  snapply version
  snapply version -o json
  snapply version --server --context prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("unknown output format %q: want text or json", output)
			}
			info := versionInfo{Client: version.Get()}
			var serverErr error
			if server {
				info.Server, serverErr = g.serverVersion(cmd)
			}
			if err := writeVersion(g.io.Out, info, output); err != nil {
				return err
			}
			return serverErr
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.Flags().BoolVar(&server, "server", false, "also print the API server's version")
	return cmd
}

// serverVersion asks the API server of the kubeconfig flags for its version.
func (g *globals) serverVersion(cmd *cobra.Command) (*version.Info, error) {
	c, err := g.client(cmd.Context())
	if err != nil {
		return nil, err
	}
	v, err := c.Discovery.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("server version: %w", err)
	}
	return &version.Info{Version: v.GitVersion, Commit: v.GitCommit, GoVersion: v.GoVersion, Platform: v.Platform}, nil
}

// writeVersion writes info as text or JSON.
func writeVersion(w io.Writer, info versionInfo, output string) error {
	if output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	c := info.Client
	if _, err := fmt.Fprintf(w, "snapply %s (commit %s, %s, %s)\n", c.Version, c.Commit, c.GoVersion, c.Platform); err != nil {
		return err
	}
	if s := info.Server; s != nil {
		_, err := fmt.Fprintf(w, "server %s (commit %s, %s, %s)\n", s.Version, s.Commit, s.GoVersion, s.Platform)
		return err
	}
	return nil
}
