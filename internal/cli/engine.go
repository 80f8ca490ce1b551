package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/store"
)

// newEngine returns the engine of a command: the cluster of the
// kubectl-style flags, the source of the GitHub Actions environment (empty
// outside it), and progress printed to stderr.
func (g *globals) newEngine() *engine.Engine {
	return &engine.Engine{
		NewClient: func() (*kube.Client, error) { return kube.NewClient(g.kube, kube.DefaultOptions()) },
		Source:    engine.SourceFromEnv(os.Getenv),
		Progress:  g.engineProgress(),
	}
}

// engineProgress prints the engine's events: each message, the start and
// end of each wave and every failure, and readiness at most every 5s.
func (g *globals) engineProgress() func(engine.Event) {
	var last time.Time
	return func(e engine.Event) {
		switch {
		case e.Apply != nil:
			g.applyProgress(*e.Apply)
		case e.Stage == engine.StageWait:
			if time.Since(last) < 5*time.Second && e.Ready < e.Total {
				return
			}
			last = time.Now()
			g.progress("%s", waitLine(e.Ready, e.Total, e.Pending))
		default:
			g.progress("%s", e.Message)
		}
	}
}

func (g *globals) applyProgress(e apply.Event) {
	switch {
	case e.Record != nil && (e.Record.Outcome == apply.Failed):
		g.progress("  failed %s: %s", e.Record.Ref, e.Record.Error)
	case e.Record != nil:
	case e.End:
		g.progress("%s: %d objects done in %s", e.Wave, e.Done, e.Elapsed.Round(time.Millisecond))
	default:
		g.progress("%s: %d objects...", e.Wave, e.Total)
	}
}

// waitLine says how many objects are ready and what is still awaited.
func waitLine(ready, total int, pending []apply.Readiness) string {
	line := fmt.Sprintf("wait: %d/%d ready", ready, total)
	if len(pending) > 0 {
		line += fmt.Sprintf("; waiting for %s (%s: %s)", pending[0].Ref, pending[0].Status, pending[0].Message)
		if len(pending) > 1 {
			line += fmt.Sprintf(" and %d more", len(pending)-1)
		}
	}
	return line
}

// addEngineFlags adds the flags plan, apply and rollback share.
func addEngineFlags(f *pflag.FlagSet, o *engine.Options) {
	d := engine.DefaultOptions()
	f.StringVar(&o.StorePath, "store", d.StorePath, "store file: created if missing, appended to if present")
	f.StringVar(&o.Scope, "scope", d.Scope, "what the snapshot holds: managed (the desired objects), namespaces (all objects of their namespaces) or cluster")
	f.IntVar(&o.Concurrency, "concurrency", d.Concurrency, "requests in flight")
	f.BoolVar(&o.ForceConflicts, "force-conflicts", false, "take fields owned by other field managers (every object; or annotate one object with "+plan.ForceAnnotation+`: "true")`)
	f.BoolVar(&o.Revalidate, "revalidate", false, "dry-run every object, also those the record of the last apply shows to be unchanged (after a change of admission webhooks or policies)")
	f.BoolVar(&o.AllowEmpty, "allow-empty", false, "accept a PATH that renders no object (apply would then prune everything it applied before)")
	f.StringVar(&o.Name, "name", d.Name, "inventory name: the ApplySet parent Secret and its Lease; one per environment")
	f.StringVar(&o.InventoryNamespace, "inventory-namespace", d.InventoryNamespace, "namespace of the inventory Secret and Lease")
	f.StringVar(&o.PolicyDir, "policy", "", "directory of Rego policies (conftest conventions: package main, deny/violation/warn rules) evaluated on every object; a deny blocks apply")
	addStoreKeyFlag(f, &o.StoreKey.Env)
}

// addStoreKeyFlag adds --store-key-env: the variable that holds the store
// key, which encrypts the store file and seals Secret values in it.
func addStoreKeyFlag(f *pflag.FlagSet, env *string) {
	f.StringVar(env, "store-key-env", store.KeyEnv, "environment variable that holds the store key (64 hex characters, base64 of 32 bytes, or a passphrase): with it the store file is encrypted and Secret values sealed; an encrypted store needs it")
}

// addDeployFlags adds the flags apply and rollback share.
func addDeployFlags(f *pflag.FlagSet, o *engine.DeployOptions, what string) {
	d := engine.DefaultDeployOptions()
	f.BoolVar(&o.Prune, "prune", d.Prune, "delete the inventory's objects that are "+what)
	f.BoolVar(&o.Wait, "wait", d.Wait, "wait until the applied objects are ready (kstatus)")
	f.DurationVar(&o.Timeout, "timeout", d.Timeout, "how long to wait for the lock, and for readiness")
	f.BoolVar(&o.AllowDestructive, "allow-destructive", false, "let the prune delete Namespaces and CustomResourceDefinitions")
}

// openExisting opens an existing store read-only, to inspect it: the key
// in the variable keyEnv opens an encrypted file, but nothing is unsealed.
func openExisting(path, keyEnv string) (*store.DB, error) {
	return engine.InspectStore(path, engine.StoreKey{Env: keyEnv}, os.Getenv)
}

// client returns a client of the cluster of the kubectl-style flags, once
// the API server answered.
func (g *globals) client(ctx context.Context) (*kube.Client, error) {
	c, err := kube.NewClient(g.kube, kube.DefaultOptions())
	if err != nil {
		return nil, err
	}
	if err := c.Ping(ctx); err != nil {
		return nil, err
	}
	return c, nil
}
