package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func TestParseFlagsRejects(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no kubeconfig", nil},
		{"stray argument", []string{"--kubeconfig", "k", "extra"}},
		{"unknown flag", []string{"--kubeconfig", "k", "--nodes", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parseFlags(tt.args, io.Discard); err == nil {
				t.Errorf("parseFlags(%q) succeeded", tt.args)
			}
		})
	}
}

func TestRefusesToOverwriteForeignKubeconfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	foreign := "apiVersion: v1\nkind: Config\ncurrent-context: prod\ncontexts:\n- name: prod\n  context: {cluster: prod, user: admin}\n"
	if err := os.WriteFile(path, []byte(foreign), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(t.Context(), []string{"--kubeconfig", path}, io.Discard, func() {})
	if err == nil || !strings.Contains(err.Error(), "refusing to overwrite") {
		t.Fatalf("run() error = %v, want a refusal", err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != foreign {
		t.Errorf("the foreign kubeconfig was changed:\n%s", b)
	}
}

func TestRunServesUntilCancelled(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "sub", "kubeconfig")
	pidfile := filepath.Join(dir, "localcluster.pid")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"--kubeconfig", kubeconfig, "--pidfile", pidfile, "--dir", filepath.Join(dir, "state")}, pw, func() {})
		pw.CloseWithError(errors.New("run returned"))
		done <- err
	}()

	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v (run: %v)", err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if want := "ready: export KUBECONFIG=" + kubeconfig + "\n"; line != want {
		t.Errorf("printed %q, want %q", line, want)
	}
	pid, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(pid)); got != strconv.Itoa(os.Getpid()) {
		t.Errorf("pidfile holds %q, want %d", got, os.Getpid())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("the kubeconfig does not reach the API server: %v", err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run() after cancel: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("run() did not return 60s after cancel")
	}
	for _, f := range []string{pidfile, kubeconfig} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "etcd")); err != nil {
		t.Errorf("--dir not kept: %v", err)
	}
}
