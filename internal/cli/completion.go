package cli

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/store"
)

// Completion reads the cluster and the store with short time limits, and
// prints nothing but completions: an unreachable cluster or an unreadable
// store completes nothing.
const (
	completionClusterTimeout = 2 * time.Second
	completionStoreTimeout   = 500 * time.Millisecond
)

// noFiles is the directive of a value completed from a list.
const noFiles = cobra.ShellCompDirectiveNoFileComp

// registerClusterCompletions completes the kubeconfig flags of c:
// --context, --cluster and --user from the kubeconfig, -n from the cluster.
func (g *globals) registerClusterCompletions(c *cobra.Command) {
	for _, flag := range []string{"context", "cluster", "user"} {
		_ = c.RegisterFlagCompletionFunc(flag, g.completeKubeconfig(flag))
	}
	_ = c.RegisterFlagCompletionFunc("namespace", g.completeNamespaces)
}

// completeKubeconfig completes the names of flag's kind (context, cluster,
// user) in the kubeconfig: the one the command line's --kubeconfig names,
// else KUBECONFIG's or ~/.kube/config. A context is described by its
// cluster, user and namespace.
func (g *globals) completeKubeconfig(flag string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		raw, err := g.kube.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, noFiles
		}
		names := map[string]string{}
		switch flag {
		case "context":
			for name, c := range raw.Contexts {
				desc := fmt.Sprintf("cluster %s, user %s", c.Cluster, c.AuthInfo)
				if c.Namespace != "" {
					desc += ", namespace " + c.Namespace
				}
				if name == raw.CurrentContext {
					desc += " (current)"
				}
				names[name] = desc
			}
		case "cluster":
			for name, c := range raw.Clusters {
				names[name] = c.Server
			}
		case "user":
			for name := range raw.AuthInfos {
				names[name] = ""
			}
		}
		out := make([]cobra.Completion, 0, len(names))
		for _, name := range slices.Sorted(maps.Keys(names)) {
			if names[name] == "" {
				out = append(out, name)
			} else {
				out = append(out, cobra.CompletionWithDesc(name, names[name]))
			}
		}
		return out, noFiles
	}
}

// completeNamespaces completes -n with the cluster's namespaces, read with
// a short timeout; an unreachable cluster completes nothing.
func (g *globals) completeNamespaces(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionClusterTimeout)
	defer cancel()
	opts := kube.DefaultOptions()
	c, err := kube.NewClient(g.kube, opts)
	if err != nil {
		return nil, noFiles
	}
	list, err := c.Metadata.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, noFiles
	}
	var out []cobra.Completion
	for _, ns := range list.Items {
		if strings.HasPrefix(ns.Name, toComplete) {
			out = append(out, ns.Name)
		}
	}
	return out, noFiles
}

// snapshotFilter picks the snapshots a completion offers.
type snapshotFilter func(db *store.DB) (func(store.Meta) bool, error)

// allSnapshots offers every snapshot.
func allSnapshots(*store.DB) (func(store.Meta) bool, error) {
	return func(store.Meta) bool { return true }, nil
}

// runSnapshots offers the snapshots of recorded runs: those rollback --to
// accepts.
func runSnapshots(db *store.DB) (func(store.Meta) bool, error) {
	runs, err := db.Runs()
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, r := range runs {
		ids[r.Before], ids[r.Desired], ids[r.After] = true, true, true
	}
	return func(m store.Meta) bool { return ids[m.ID] }, nil
}

// openCompletionStore opens the command's --store read-only, as the
// command would: the store key in the variable its --store-key-env names
// (SNAPPLY_STORE_KEY by default) opens an encrypted file, and nothing is
// unsealed. It waits completionStoreTimeout at most for a lock; decrypting
// a copy takes tens of milliseconds for a thousand objects.
func openCompletionStore(cmd *cobra.Command) (*store.DB, error) {
	path, err := cmd.Flags().GetString("store")
	if err != nil {
		return nil, err
	}
	env, _ := cmd.Flags().GetString("store-key-env") // "" (the default variable) when the command has no such flag
	key, err := engine.StoreKey{Env: env}.Read(os.Getenv)
	if err != nil {
		return nil, err
	}
	return store.Open(path, store.Options{ReadOnly: true, Timeout: completionStoreTimeout, FileKey: key})
}

// completeSnapshots returns "latest" and the IDs of the snapshots of the
// command's --store that keep accepts, newest first, each described by its
// kind, time, size and commit.
func completeSnapshots(cmd *cobra.Command, toComplete string, keep snapshotFilter) ([]cobra.Completion, cobra.ShellCompDirective) {
	directive := noFiles | cobra.ShellCompDirectiveKeepOrder
	db, err := openCompletionStore(cmd)
	if err != nil {
		return nil, directive
	}
	defer db.Close()
	metas, err := db.Snapshots()
	if err != nil {
		return nil, directive
	}
	ok, err := keep(db)
	if err != nil {
		return nil, directive
	}
	var out []cobra.Completion
	latest := strings.HasPrefix("latest", toComplete)
	for _, m := range slices.Backward(metas) {
		if !ok(m) {
			continue
		}
		if latest { // offered when there is something it names
			out = append(out, cobra.CompletionWithDesc("latest", "the newest of these"))
			latest = false
		}
		if !strings.HasPrefix(m.ID, toComplete) {
			continue
		}
		desc := fmt.Sprintf("%s, %s, %d objects", m.Kind, m.Created.UTC().Format(time.RFC3339), m.Count)
		if m.Source.Commit != "" {
			desc += ", commit " + shortCommit(m.Source.Commit)
		}
		out = append(out, cobra.CompletionWithDesc(m.ID, desc))
	}
	return out, directive
}

// completeRefs completes the objects of snapshot id in the command's
// --store, as Kind/namespace/name (Kind/name when cluster-scoped).
func completeRefs(cmd *cobra.Command, id, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	db, err := openCompletionStore(cmd)
	if err != nil {
		return nil, noFiles
	}
	defer db.Close()
	snap, err := db.Snapshot(id)
	if err != nil {
		return nil, noFiles
	}
	var out []cobra.Completion
	for _, e := range snap.Entries {
		ref := e.Ref.Kind + "/" + e.Ref.Name
		if e.Ref.Namespace != "" {
			ref = e.Ref.Kind + "/" + e.Ref.Namespace + "/" + e.Ref.Name
		}
		if strings.HasPrefix(ref, toComplete) {
			out = append(out, ref)
		}
	}
	return out, noFiles
}

// completeFlagValues completes, for every command under root, -o from the
// formats its usage lists ("output format: text, markdown or json"), and
// --scope, --state and --color from their fixed values, unless the command
// registered its own.
func completeFlagValues(root *cobra.Command) {
	fixed := map[string][]string{
		"scope": {"managed", "namespaces", "cluster"},
		"state": {"desired", "before"},
	}
	_ = root.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]cobra.Completion{"auto", "always", "never"}, noFiles))
	for _, c := range root.Commands() {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if _, ok := c.GetFlagCompletionFunc(f.Name); ok {
				return
			}
			values := fixed[f.Name]
			if f.Name == "output" {
				values = usageValues(f.Usage)
			}
			if len(values) > 0 {
				_ = c.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(values, noFiles))
			}
		})
	}
}

// usageValues returns the values a usage lists after its colon: "output
// format: text, markdown or json" gives text, markdown and json.
func usageValues(usage string) []string {
	_, list, ok := strings.Cut(usage, ": ")
	if !ok {
		return nil
	}
	list, _, _ = strings.Cut(list, " (")
	list, _, _ = strings.Cut(list, ";")
	var out []string
	for _, part := range strings.Split(list, ", ") {
		for _, v := range strings.Split(part, " or ") {
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}
