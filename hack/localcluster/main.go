// Command localcluster runs a local Kubernetes API server for the demo and
// the benchmarks: etcd and kube-apiserver and, with --controllers,
// kube-controller-manager, kube-scheduler and kwok with one fake Node, so
// that Deployments roll out. It writes an admin kubeconfig, prints
//
//	ready: export KUBECONFIG=/path/to/kubeconfig
//
// and runs until SIGINT or SIGTERM, then stops everything.
//
//	go run ./hack/localcluster --kubeconfig /tmp/snapply-demo/kubeconfig [--controllers] [--dir DIR] [--pidfile FILE]
//
// The binaries come from hack/tools.sh (`hack/tools.sh cluster` for
// --controllers). With --pidfile, `kill $(cat FILE)` stops it cleanly; the
// PID is this program's, not that of `go run`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/snapply/snapply/internal/testenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, stop)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster: %v\n", err)
		os.Exit(1)
	}
}

// options are the command line flags.
type options struct {
	kubeconfig  string
	controllers bool
	dir         string
	pidfile     string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("localcluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "write the admin kubeconfig to this `file` (required)")
	fs.BoolVar(&o.controllers, "controllers", false, "also run kube-controller-manager, kube-scheduler and kwok, so that Deployments roll out")
	fs.StringVar(&o.dir, "dir", "", "keep etcd's data, certificates and logs in this `directory` (default: a temporary one, removed at exit)")
	fs.StringVar(&o.pidfile, "pidfile", "", "write this process's ID to this `file` while it runs")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.kubeconfig == "" {
		return o, errors.New("--kubeconfig is required")
	}
	return o, nil
}

// run starts the cluster and blocks until ctx is done. stopSignals is
// called once shutdown begins, so that a second Ctrl-C kills at once.
func run(ctx context.Context, args []string, stdout io.Writer, stopSignals func()) (err error) {
	o, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	if o.kubeconfig, err = filepath.Abs(o.kubeconfig); err != nil {
		return err
	}
	if err := checkOverwrite(o.kubeconfig); err != nil {
		return err
	}

	env, err := testenv.Start(ctx, testenv.Options{Controllers: o.controllers, Dir: o.dir})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, env.Stop()) }()

	if err := copyKubeconfig(env.Kubeconfig, o.kubeconfig); err != nil {
		return err
	}
	defer func() { _ = os.Remove(o.kubeconfig) }() // it names a server that is gone
	if o.pidfile != "" {
		if err := os.WriteFile(o.pidfile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			return fmt.Errorf("%s: %w", o.pidfile, err)
		}
		defer func() { _ = os.Remove(o.pidfile) }()
	}
	fmt.Fprintf(stdout, "ready: export KUBECONFIG=%s\n", o.kubeconfig)

	<-ctx.Done()
	stopSignals()
	return nil
}

// checkOverwrite refuses to replace a kubeconfig this command did not
// write, such as ~/.kube/config.
func checkOverwrite(path string) error {
	cfg, err := clientcmd.LoadFromFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil || cfg.CurrentContext != testenv.ContextName {
		return fmt.Errorf("%s: exists and is not a kubeconfig written by localcluster (context %q): refusing to overwrite it", path, testenv.ContextName)
	}
	return nil
}

// copyKubeconfig copies the file, readable by its owner only: it holds a
// client key.
func copyKubeconfig(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("%s: %w", to, err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		return fmt.Errorf("%s: %w", to, err)
	}
	return nil
}
