package kube

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// NoKubeconfigError says that no kubeconfig names a cluster and the process
// does not run in a cluster: client-go would otherwise fall back to
// http://localhost:8080 and fail with "cannot reach the API server" there.
type NoKubeconfigError struct {
	// KubeconfigEnv is $KUBECONFIG; empty when it is unset.
	KubeconfigEnv string
	// Tried lists each kubeconfig file looked for, with what was wrong with
	// it ("no such file", "no cluster").
	Tried []TriedFile
	// InCluster says why the in-cluster config is not available.
	InCluster string
}

// TriedFile is one kubeconfig file looked for.
type TriedFile struct {
	Path    string
	Problem string
}

// Error implements error.
func (e *NoKubeconfigError) Error() string {
	var tried []string
	for _, f := range e.Tried {
		tried = append(tried, f.Path+": "+f.Problem)
	}
	where := fmt.Sprintf("~/.kube/config (%s; KUBECONFIG is unset)", strings.Join(tried, "; "))
	if e.KubeconfigEnv != "" {
		where = fmt.Sprintf("the files of KUBECONFIG=%s (%s; ~/.kube/config is not read when KUBECONFIG is set)", e.KubeconfigEnv, strings.Join(tried, "; "))
	}
	return fmt.Sprintf("no kubeconfig found: looked in %s and for in-cluster config (%s); pass --kubeconfig FILE, or set KUBECONFIG to a kubeconfig file (your cloud's get-credentials command writes one)", where, e.InCluster)
}

// checkKubeconfig returns a *NoKubeconfigError when neither a kubeconfig
// file, nor --server, nor the in-cluster config gives a cluster. An explicit
// --kubeconfig is left to client-go, which names the file it cannot read.
func checkKubeconfig(flags *genericclioptions.ConfigFlags, loader clientcmd.ClientConfig) error {
	if flags.APIServer != nil && *flags.APIServer != "" {
		return nil
	}
	access := loader.ConfigAccess()
	if access.GetExplicitFile() != "" {
		return nil
	}
	if raw, err := loader.RawConfig(); err != nil || len(raw.Clusters) > 0 {
		return nil // a broken file: client-go's error names it
	}
	inCluster := "KUBERNETES_SERVICE_HOST is unset"
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		_, err := rest.InClusterConfig()
		if err == nil {
			return nil
		}
		inCluster = err.Error()
	}
	e := &NoKubeconfigError{KubeconfigEnv: os.Getenv(clientcmd.RecommendedConfigPathEnvVar), InCluster: inCluster}
	for _, path := range access.GetLoadingPrecedence() {
		problem := "no cluster in it"
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			problem = "no such file"
		} else if err != nil {
			problem = err.Error()
		}
		e.Tried = append(e.Tried, TriedFile{Path: path, Problem: problem})
	}
	return e
}
