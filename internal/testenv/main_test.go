package testenv

import "testing"

// env is the package's API server, started by Main.
var env *Env

func TestMain(m *testing.M) { Main(m, &env) }
