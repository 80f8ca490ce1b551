package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// toolsVersions names the directory hack/tools.sh builds the binaries into.
// Keep it in sync with `versions=` in hack/tools.sh (TestToolsDirInSync
// checks that they agree).
const toolsVersions = "k8s-1.36.3_etcd-3.6.6_kwok-0.7.0_kapp-0.64.2"

// Names of the binaries an Env runs.
const (
	binEtcd              = "etcd"
	binAPIServer         = "kube-apiserver"
	binControllerManager = "kube-controller-manager"
	binScheduler         = "kube-scheduler"
	binKwok              = "kwok"
)

// errNoAssets is wrapped by the errors of Assets and Start when a binary is
// missing.
var errNoAssets = errors.New("build them with `make tools` (hack/tools.sh envtest), or set KUBEBUILDER_ASSETS")

// Assets returns the directory holding etcd and kube-apiserver:
// $KUBEBUILDER_ASSETS when it is set and holds both, else the directory
// hack/tools.sh builds them into ($SNAPPLY_TOOLS_DIR, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/snapply/tools/<versions>). It returns an
// error that says how to build them when neither directory holds them.
func Assets() (string, error) {
	return assets(os.Getenv)
}

func assets(getenv func(string) string) (string, error) {
	if dir := getenv("KUBEBUILDER_ASSETS"); dir != "" && hasAll(dir, binEtcd, binAPIServer) {
		return dir, nil
	}
	dir, err := toolsDir(getenv)
	if err != nil {
		return "", err
	}
	if !hasAll(dir, binEtcd, binAPIServer) {
		where := dir
		if kb := getenv("KUBEBUILDER_ASSETS"); kb != "" {
			where = kb + " or " + dir
		}
		return "", fmt.Errorf("etcd and kube-apiserver: not found in %s: %w", where, errNoAssets)
	}
	return dir, nil
}

// toolsDir mirrors the directory logic of hack/tools.sh; keep the two in
// sync.
func toolsDir(getenv func(string) string) (string, error) {
	if dir := getenv("SNAPPLY_TOOLS_DIR"); dir != "" {
		return dir, nil
	}
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("tools directory: neither SNAPPLY_TOOLS_DIR, XDG_CACHE_HOME nor HOME is set")
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "snapply", "tools", toolsVersions), nil
}

// findBinary returns the path of the named binary in $KUBEBUILDER_ASSETS or,
// failing that, in the tools directory.
func findBinary(getenv func(string) string, name string) (string, error) {
	var dirs []string
	if dir := getenv("KUBEBUILDER_ASSETS"); dir != "" {
		dirs = append(dirs, dir)
	}
	if dir, err := toolsDir(getenv); err == nil {
		dirs = append(dirs, dir)
	}
	for _, dir := range dirs {
		if hasAll(dir, name) {
			return filepath.Join(dir, name), nil
		}
	}
	return "", fmt.Errorf("%s: not found in %q: build it with `hack/tools.sh cluster`", name, dirs)
}

// hasAll reports whether dir holds an executable file of each name.
func hasAll(dir string, names ...string) bool {
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}

// HelmBinary is the name of the helm binary `hack/tools.sh helm` builds,
// from the same Helm module snapply renders charts with.
const HelmBinary = "helm-v4.2.4"

// Tool returns the path of a binary hack/tools.sh builds, such as
// HelmBinary, from $KUBEBUILDER_ASSETS or the tools directory.
func Tool(name string) (string, error) {
	return findBinary(os.Getenv, name)
}
