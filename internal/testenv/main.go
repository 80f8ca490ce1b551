package testenv

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
)

// Main is for TestMain: it starts an Env (DefaultOptions) for the package,
// sets *env, runs the tests, stops the Env and exits with the tests' status.
// When the binaries are missing it says how to build them and exits 1: a
// package whose tests need an API server must not pass without one.
//
// When the test binary only lists tests (go test -list), no Env is started.
func Main(m *testing.M, env **Env) {
	os.Exit(run(m, env))
}

func run(m *testing.M, env **Env) int {
	flag.Parse()
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		return m.Run()
	}
	e, err := Start(context.Background(), DefaultOptions())
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: cannot run these tests without an API server: %v\n", err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
