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
// No Env is started, and *env stays nil, when the test binary only lists
// tests (go test -list) or is a fuzzing worker: a Fuzz target must not use
// the Env (fuzzing against an API server is too slow to find anything).
func Main(m *testing.M, env **Env) {
	os.Exit(run(m, env))
}

func run(m *testing.M, env **Env) int {
	flag.Parse()
	if flagSet("test.list") || flagSet("test.fuzzworker") {
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

// flagSet reports whether the named flag has a value other than empty or
// false.
func flagSet(name string) bool {
	f := flag.Lookup(name)
	if f == nil {
		return false
	}
	v := f.Value.String()
	return v != "" && v != "false"
}
