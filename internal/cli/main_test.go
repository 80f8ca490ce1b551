package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/snapply/snapply/internal/cli"
	"github.com/snapply/snapply/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// result is what one snapply run printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

// snapply runs the command in process against the test API server.
func snapply(t *testing.T, args ...string) result {
	t.Helper()
	return snapplyCtx(t, context.Background(), args...)
}

func snapplyCtx(t *testing.T, ctx context.Context, args ...string) result {
	t.Helper()
	return runRawCtx(ctx, append(args, "--kubeconfig", env.Kubeconfig)...)
}

// runRaw runs the command with args as they are (no test kubeconfig).
func runRaw(t *testing.T, args ...string) result {
	t.Helper()
	return runRawCtx(context.Background(), args...)
}

func runRawCtx(ctx context.Context, args ...string) result {
	var out, errb bytes.Buffer
	code := cli.Main(ctx, args, cli.IO{In: strings.NewReader(""), Out: &out, Err: &errb})
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// manifests writes files (name -> YAML, with NS replaced by ns) into a new
// directory and returns it.
func manifests(t *testing.T, ns string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(text, "NS", ns)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// watchWriter is a stderr that closes seen once a line holding want was
// written: a test waits on it for a run to reach a step, with no sleep.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	done bool
}

func newWatchWriter(want string) *watchWriter {
	return &watchWriter{want: want, seen: make(chan struct{})}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if !w.done && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
		w.done = true
	}
	return n, err
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// runWatched runs the command like snapplyCtx with stderr going to w.
func runWatched(ctx context.Context, w *watchWriter, args ...string) result {
	var out bytes.Buffer
	code := cli.Main(ctx, append(args, "--kubeconfig", env.Kubeconfig), cli.IO{In: strings.NewReader(""), Out: &out, Err: w})
	return result{stdout: out.String(), stderr: w.String(), code: code}
}
