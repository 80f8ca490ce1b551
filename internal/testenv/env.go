package testenv

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ContextName is the name of the context, cluster and user in an Env's
// kubeconfig file.
const ContextName = "snapply-test"

// ServiceClusterIPRange is the API server's range of Service IPs: a /16, as
// the envtest default /24 is full after about 250 Services.
const ServiceClusterIPRange = "10.96.0.0/16"

const (
	// startTimeout bounds the start of etcd and of kube-apiserver each. It
	// is generous: `go test ./...` starts one per package, in parallel.
	startTimeout = 90 * time.Second
	stopTimeout  = 20 * time.Second
)

// Options says what an Env runs.
type Options struct {
	// Controllers also runs kube-controller-manager, kube-scheduler and
	// kwok, with one fake Node, so that Deployments roll out and their
	// Pods turn Running.
	Controllers bool
	// Dir is where etcd's data, certificates, the kubeconfig and logs go.
	// Empty means a new temporary directory that Stop removes; a directory
	// given here is kept, and so is etcd's data in it.
	Dir string
}

// TokenUser is the user of Env.Token.
const TokenUser = "snapply-token-user"

// DefaultOptions returns the options Main uses: an API server and etcd, no
// controllers, in a temporary directory.
func DefaultOptions() Options {
	return Options{}
}

// Env is a running API server, and its controllers if asked for.
type Env struct {
	// Config is for an admin user (group system:masters), with high client
	// rate limits.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for the same user, with
	// one context, ContextName.
	Kubeconfig string
	// Dir holds etcd's data, certificates, the kubeconfig and the logs of
	// every process (logs/NAME.log).
	Dir string
	// Token is a bearer token the API server accepts (its
	// --token-auth-file) for the user TokenUser in group system:masters:
	// for credentials that do not come from the kubeconfig, such as an
	// exec credential plugin. It is new on every start.
	Token string

	client  kubernetes.Interface
	te      *envtest.Environment
	procs   []*proc
	wd      *watchdog
	ownDir  bool
	stopErr error
	stopped sync.Once
}

var discardControllerRuntimeLogs sync.Once

// Start starts etcd and kube-apiserver and, with opts.Controllers, the
// controllers and a fake Node, in which case it returns once the Node is
// Ready. Call Stop when done; should the test binary die first, a watcher
// process terminates what Start started.
func Start(ctx context.Context, opts Options) (_ *Env, err error) {
	assetsDir, err := Assets()
	if err != nil {
		return nil, err
	}
	var bins map[string]string
	if opts.Controllers {
		bins = map[string]string{}
		for _, name := range []string{binControllerManager, binScheduler, binKwok} {
			if bins[name], err = findBinary(os.Getenv, name); err != nil {
				return nil, err
			}
		}
	}
	// envtest logs through controller-runtime, which complains on stderr
	// when no logger was set; a library must not print.
	discardControllerRuntimeLogs.Do(func() { ctrllog.SetLogger(logr.Discard()) })

	e := &Env{Dir: opts.Dir}
	if e.Dir == "" {
		if e.Dir, err = os.MkdirTemp("", "snapply-testenv-"); err != nil {
			return nil, fmt.Errorf("test environment: %w", err)
		}
		e.ownDir = true
	} else if e.Dir, err = filepath.Abs(e.Dir); err != nil {
		return nil, fmt.Errorf("test environment: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Stop())
		}
	}()
	// Certificates are made anew on every start; envtest would reuse stale
	// ones without knowing their CA.
	if err := os.RemoveAll(e.certDir()); err != nil {
		return nil, fmt.Errorf("test environment: %w", err)
	}
	for _, d := range []string{e.certDir(), e.logDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("test environment: %w", err)
		}
	}
	removeDir := ""
	if e.ownDir {
		removeDir = e.Dir
	}
	if e.wd, err = startWatchdog(removeDir); err != nil {
		return nil, err
	}

	if err := e.startControlPlane(assetsDir); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("test environment: %w", err)
	}
	if err := e.writeKubeconfig(); err != nil {
		return nil, err
	}
	if e.client, err = kubernetes.NewForConfig(e.Config); err != nil {
		return nil, fmt.Errorf("test environment: %w", err)
	}
	if opts.Controllers {
		if err := e.startControllers(ctx, bins); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// startControlPlane starts etcd and kube-apiserver through envtest, with
// their data and logs in e.Dir, and has the watchdog watch them.
func (e *Env) startControlPlane(assetsDir string) error {
	etcdLog, err := e.openLog(binEtcd)
	if err != nil {
		return err
	}
	defer etcdLog.Close()
	apiLog, err := e.openLog(binAPIServer)
	if err != nil {
		return err
	}
	defer apiLog.Close()

	no := false
	e.te = &envtest.Environment{
		BinaryAssetsDirectory:    assetsDir,
		UseExistingCluster:       &no, // never a cluster named by USE_EXISTING_CLUSTER
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  stopTimeout,
	}
	e.te.ControlPlane.Etcd = &envtest.Etcd{
		DataDir: filepath.Join(e.Dir, "etcd"),
		Out:     etcdLog,
		Err:     etcdLog,
	}
	api := e.te.ControlPlane.GetAPIServer()
	api.CertDir = e.certDir()
	api.Out, api.Err = apiLog, apiLog
	api.Configure().Set("service-cluster-ip-range", ServiceClusterIPRange)
	e.Token = rand.Text()
	tokens := filepath.Join(e.certDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte(e.Token+","+TokenUser+","+TokenUser+",\"system:masters\"\n"), 0o600); err != nil {
		return fmt.Errorf("test environment: %w", err)
	}
	api.Configure().Set("token-auth-file", tokens)

	// Watch the processes while envtest starts them, so that a test binary
	// interrupted during the start leaves nothing behind either.
	stopPolling := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			e.watchChildren()
			select {
			case <-stopPolling:
				return
			case <-t.C:
			}
		}
	}()
	cfg, err := e.te.Start()
	close(stopPolling)
	<-polled
	e.watchChildren()
	if err != nil {
		return fmt.Errorf("kube-apiserver: start: %w%s", err, e.logTail(binAPIServer, binEtcd))
	}
	e.Config = cfg
	return nil
}

// watchChildren has the watchdog watch etcd and kube-apiserver.
func (e *Env) watchChildren() {
	for _, pid := range childProcesses(e.Dir) {
		_ = e.wd.watch(pid) // best effort: Stop still stops them
	}
}

// writeKubeconfig writes the admin user's kubeconfig to e.Dir/kubeconfig.
func (e *Env) writeKubeconfig() error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{
		Server:                   e.Config.Host,
		CertificateAuthorityData: e.Config.CAData,
	}
	cfg.AuthInfos[ContextName] = &clientcmdapi.AuthInfo{
		ClientCertificateData: e.Config.CertData,
		ClientKeyData:         e.Config.KeyData,
		Token:                 e.Config.BearerToken,
	}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: ContextName}
	cfg.CurrentContext = ContextName
	e.Kubeconfig = filepath.Join(e.Dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, e.Kubeconfig); err != nil {
		return fmt.Errorf("%s: %w", e.Kubeconfig, err)
	}
	return nil
}

// Stop stops the controllers, kube-apiserver and etcd, and removes Dir if
// Start made it. It may be called more than once.
func (e *Env) Stop() error {
	e.stopped.Do(func() { e.stopErr = e.stop() })
	return e.stopErr
}

func (e *Env) stop() error {
	var errs []error
	for i := len(e.procs) - 1; i >= 0; i-- {
		if err := e.procs[i].stop(stopTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	if e.te != nil {
		if err := e.te.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("kube-apiserver and etcd: stop: %w", err))
		}
	}
	if e.wd != nil {
		// After a failed stop, let the watchdog kill what is left.
		if err := e.wd.release(len(errs) > 0); err != nil {
			errs = append(errs, err)
		}
	}
	if e.ownDir {
		if err := os.RemoveAll(e.Dir); err != nil {
			errs = append(errs, fmt.Errorf("test environment: %w", err))
		}
	}
	return errors.Join(errs...)
}

func (e *Env) certDir() string { return filepath.Join(e.Dir, "apiserver") }

func (e *Env) logDir() string { return filepath.Join(e.Dir, "logs") }

// openLog opens logs/NAME.log for appending.
func (e *Env) openLog(name string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(e.logDir(), name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("test environment: %w", err)
	}
	return f, nil
}

// logTail returns the last lines of the named logs, to explain a failure.
func (e *Env) logTail(names ...string) string {
	const maxBytes = 2000
	var s string
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(e.logDir(), name+".log"))
		if err != nil || len(b) == 0 {
			continue
		}
		if len(b) > maxBytes {
			b = b[len(b)-maxBytes:]
		}
		s += fmt.Sprintf("\n--- end of %s.log ---\n%s", name, b)
	}
	return s
}
