package testenv

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// env is the package's API server, started by Main.
var env *Env

func TestMain(m *testing.M) { Main(m, &env) }

// runSelf runs this test binary with args and no binaries to be found.
func runSelf(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "KUBEBUILDER_ASSETS=", "SNAPPLY_TOOLS_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func TestMainFailsWithoutBinaries(t *testing.T) {
	out, code := runSelf(t, "-test.run=^TestAssets$")
	if code != 1 {
		t.Errorf("exit code %d, want 1; output:\n%s", code, out)
	}
	if !strings.Contains(out, "make tools") {
		t.Errorf("output does not say how to build the binaries:\n%s", out)
	}
}

func TestMainListsWithoutBinaries(t *testing.T) {
	out, code := runSelf(t, "-test.list=^TestAssets$")
	if code != 0 || !strings.Contains(out, "TestAssets") {
		t.Errorf("go test -list: exit code %d, output:\n%s", code, out)
	}
}
