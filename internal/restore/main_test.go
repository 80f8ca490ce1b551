package restore_test

import (
	"testing"

	"github.com/snapply/snapply/internal/testenv"
)

// env is the package's API server, started once in TestMain; give each test
// its own namespace with env.Namespace(t).
var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }
