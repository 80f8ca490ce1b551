// Package testenv runs a real Kubernetes API server for tests: etcd and
// kube-apiserver through sigs.k8s.io/controller-runtime/pkg/envtest and,
// when asked, kube-controller-manager, kube-scheduler and kwok beside them so
// that Deployments roll out and their Pods turn Running without a container
// runtime.
//
// The binaries are built from the Go module proxy by hack/tools.sh (`make
// tools`); see Assets for where they are looked up. A test package starts one
// API server in TestMain with Main and gives each test its own namespace with
// Env.Namespace:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) { testenv.Main(m, &env) }
//
//	func TestSomething(t *testing.T) {
//		ns := env.Namespace(t)
//		...
//	}
//
// Every process an Env starts is watched by a small shell process: when the
// test binary dies without calling Stop (a panic, a timeout, Ctrl-C), the
// watcher terminates them and removes the Env's temporary directory.
package testenv
