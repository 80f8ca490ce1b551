package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
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
