package apply_test

import (
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/testenv"
)

// env is the package's API server, started once in TestMain; give each test
// its own namespace with env.Namespace(t).
var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// newClient returns a client of env's API server.
func newClient(t *testing.T) *kube.Client {
	t.Helper()
	c, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// clientset returns a typed client of env's API server.
func clientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
