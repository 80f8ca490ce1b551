#!/usr/bin/env bash
# Builds the binaries snapply's tests, demo and benchmarks run, from the Go
# module proxy, into a cache outside the work tree. Prebuilt binaries cannot
# be downloaded on every machine this project runs on; the module proxy can.
#
#   hack/tools.sh envtest   etcd + kube-apiserver            (make test)
#   hack/tools.sh cluster   + kube-controller-manager, kube-scheduler, kwok (make demo)
#   hack/tools.sh bench     + kubectl, kapp                  (make bench)
#   hack/tools.sh lint      actionlint                       (make lint)
#   hack/tools.sh helm      helm, to compare chart rendering  (tests skip without it)
#   hack/tools.sh dir       print the directory that holds the binaries
#
# The directory is $SNAPPLY_TOOLS_DIR, else ~/.cache/snapply/tools/<versions>.
# A binary already there is not rebuilt. When KUBEBUILDER_ASSETS is set and
# holds etcd and kube-apiserver, `envtest` builds nothing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# internal/testenv (assets.go) finds the binaries with the same logic: keep
# versions= and dir= in sync with it (TestToolsDirInSync checks).
versions="k8s-1.36.3_etcd-3.6.6_kwok-0.7.0_kapp-0.64.2"
dir=${SNAPPLY_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/snapply/tools/$versions}
mkdir -p "$dir"

build() { # build MODULE_DIR PACKAGE OUTPUT
  local mod=$1 pkg=$2 out=$3
  if [ -x "$dir/$out" ]; then return 0; fi
  echo "building $out ($pkg) into $dir ..." >&2
  local start=$SECONDS
  (cd "$here/tools/$mod" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags='-s -w' -o "$dir/$out.tmp" "$pkg")
  mv "$dir/$out.tmp" "$dir/$out"
  echo "built $out in $((SECONDS - start))s" >&2
}

envtest() {
  if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/kube-apiserver" ] && [ -x "$KUBEBUILDER_ASSETS/etcd" ]; then
    return 0
  fi
  build etcd go.etcd.io/etcd/server/v3 etcd
  build kube k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver
}

cluster() {
  envtest
  build kube k8s.io/kubernetes/cmd/kube-controller-manager kube-controller-manager
  build kube k8s.io/kubernetes/cmd/kube-scheduler kube-scheduler
  build kwok sigs.k8s.io/kwok/cmd/kwok kwok
}

# actionlint's version is in its binary's name: a new pin builds anew.
actionlint_version=v1.7.12

lint() {
  build actionlint github.com/rhysd/actionlint/cmd/actionlint "actionlint-$actionlint_version"
}

# helm's version is in its binary's name, as actionlint's; it is the Helm
# SDK's version in go.mod, so that tests compare like with like.
helm_version=v4.2.4

helm() {
  build helm helm.sh/helm/v4/cmd/helm "helm-$helm_version"
}

bench() {
  cluster
  build kube k8s.io/kubernetes/cmd/kubectl kubectl
  build kapp carvel.dev/kapp/cmd/kapp kapp
}

case "${1:-envtest}" in
  envtest)
    envtest
    # The directory that holds what the tests use: the caller's own assets
    # when they are complete.
    if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/kube-apiserver" ] && [ -x "$KUBEBUILDER_ASSETS/etcd" ]; then
      dir=$KUBEBUILDER_ASSETS
    fi
    ;;
  cluster) cluster ;;
  bench) bench ;;
  lint) lint ;;
  helm) helm ;;
  dir) ;;
  *) echo "usage: $0 envtest|cluster|bench|lint|helm|dir" >&2; exit 2 ;;
esac
echo "$dir"
