package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// NodeName is the name of the fake Node kwok runs Pods on.
const NodeName = "kwok-node-0"

// nodeReadyTimeout bounds the wait for kwok to make the Node Ready.
const nodeReadyTimeout = 60 * time.Second

// proc is a controller process Env started.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
	err  error         // its exit status, set before done is closed
}

// startControllers starts kube-controller-manager, kube-scheduler and kwok,
// creates the fake Node and waits until it is Ready.
func (e *Env) startControllers(ctx context.Context, bins map[string]string) error {
	caFile := filepath.Join(e.Dir, "ca.crt")
	if err := os.WriteFile(caFile, e.Config.CAData, 0o600); err != nil {
		return fmt.Errorf("test environment: %w", err)
	}
	kc := "--kubeconfig=" + e.Kubeconfig
	starts := []struct {
		name string
		args []string
		env  []string
	}{
		{binControllerManager, []string{
			kc,
			"--authentication-kubeconfig=" + e.Kubeconfig,
			"--authorization-kubeconfig=" + e.Kubeconfig,
			"--leader-elect=false",
			// Tokens are not needed (the API server's ServiceAccount
			// admission is off), but the key is the API server's signing
			// key, so the token controller would work if turned on.
			"--controllers=*,-serviceaccount-token",
			"--service-account-private-key-file=" + filepath.Join(e.certDir(), "sa-signer.key"),
			"--root-ca-file=" + caFile,
			"--secure-port=0", // no fixed port: several Envs may run at once
		}, nil},
		{binScheduler, []string{
			kc,
			"--authentication-kubeconfig=" + e.Kubeconfig,
			"--authorization-kubeconfig=" + e.Kubeconfig,
			"--leader-elect=false",
			"--secure-port=0",
		}, nil},
		{binKwok, []string{
			kc,
			"--manage-all-nodes=true",
		}, []string{
			// kwok reads ~/.kwok/kwok.yaml: keep a user's config out.
			"HOME=" + filepath.Join(e.Dir, "kwok"),
		}},
	}
	for _, s := range starts {
		if err := e.startProc(bins[s.name], s.name, s.args, s.env); err != nil {
			return err
		}
	}
	if err := e.createNode(ctx); err != nil {
		return err
	}
	return e.waitNodeReady(ctx)
}

// startProc starts a binary in its own process group with its output in
// logs/NAME.log, and has the watchdog watch it.
func (e *Env) startProc(path, name string, args, env []string) error {
	logFile, err := e.openLog(name)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child has its own copy
	cmd := exec.Command(path, args...)
	cmd.Dir = e.Dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = newProcessGroup()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: start: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	e.procs = append(e.procs, p)
	return e.wd.watch(cmd.Process.Pid)
}

// exited returns an error naming the first controller that has exited, with
// the end of its log, or nil.
func (e *Env) exited() error {
	for _, p := range e.procs {
		select {
		case <-p.done:
			return fmt.Errorf("%s: exited: %v%s", p.name, p.err, e.logTail(p.name))
		default:
		}
	}
	return nil
}

// stop terminates the process group, waits up to timeout, then kills it.
func (p *proc) stop(timeout time.Duration) error {
	select {
	case <-p.done:
		return nil // exited already; Start reported it
	default:
	}
	if err := signalGroup(p.cmd.Process, syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%s: stop: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
		_ = signalGroup(p.cmd.Process, syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("%s: stop: still running %s after SIGTERM, killed", p.name, timeout)
	}
}

// createNode creates the Node kwok manages, with room for many Pods.
func (e *Env) createNode(ctx context.Context) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1k"),
		corev1.ResourceMemory: resource.MustParse("4Ti"),
		corev1.ResourcePods:   resource.MustParse("10k"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        NodeName,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": NodeName,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	_, err := e.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("node/%s: create: %w", NodeName, err)
	}
	return nil
}

// waitNodeReady waits until kwok has made the Node Ready, failing early if a
// controller exits.
func (e *Env) waitNodeReady(ctx context.Context) error {
	var last, exited error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, nodeReadyTimeout, true, func(ctx context.Context) (bool, error) {
		if exited = e.exited(); exited != nil {
			return false, exited
		}
		node, err := e.client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			last = err
			return false, nil
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if exited != nil {
		return exited
	}
	if err != nil {
		if last != nil && wait.Interrupted(err) {
			err = fmt.Errorf("%w (last error: %v)", err, last)
		}
		return fmt.Errorf("node/%s: not Ready: %w%s", NodeName, err, e.logTail(binKwok))
	}
	return nil
}
