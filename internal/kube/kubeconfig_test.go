package kube

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
)

func TestNoKubeconfig(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		name string
		env  *string // KUBECONFIG; nil: unset
		want []string
	}{
		{"KUBECONFIG names missing and empty files", ptr(missing + string(filepath.ListSeparator) + empty), []string{
			"no kubeconfig found: looked in the files of KUBECONFIG=" + missing + ":" + empty,
			missing + ": no such file; " + empty + ": no cluster in it; ~/.kube/config is not read when KUBECONFIG is set",
			"in-cluster config (KUBERNETES_SERVICE_HOST is unset)",
			"pass --kubeconfig FILE, or set KUBECONFIG",
		}},
		{"KUBECONFIG unset", nil, []string{
			"no kubeconfig found: looked in ~/.kube/config (" + clientcmd.RecommendedHomeFile + ": no such file; KUBECONFIG is unset)",
			"in-cluster config (KUBERNETES_SERVICE_HOST is unset)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env == nil {
				if _, err := os.Stat(clientcmd.RecommendedHomeFile); err == nil {
					t.Skipf("%s exists", clientcmd.RecommendedHomeFile)
				}
				t.Setenv("KUBECONFIG", "")
				os.Unsetenv("KUBECONFIG")
			} else {
				t.Setenv("KUBECONFIG", *tt.env)
			}
			_, err := NewClient(genericclioptions.NewConfigFlags(true), DefaultOptions())
			var nk *NoKubeconfigError
			if !errors.As(err, &nk) {
				t.Fatalf("error %v, want a *NoKubeconfigError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%s", w, err)
				}
			}
		})
	}

	// --server, or an explicit --kubeconfig, is not "no kubeconfig".
	t.Setenv("KUBECONFIG", missing)
	server := genericclioptions.NewConfigFlags(true)
	*server.APIServer = "https://127.0.0.1:1"
	if _, err := NewClient(server, DefaultOptions()); err != nil {
		t.Errorf("--server: %v", err)
	}
	explicit := genericclioptions.NewConfigFlags(true)
	*explicit.KubeConfig = missing
	if _, err := NewClient(explicit, DefaultOptions()); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("--kubeconfig %s: %v", missing, err)
	}
}

func ptr(s string) *string { return &s }
