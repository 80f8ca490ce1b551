#!/usr/bin/env bash
# make demo: start a local Kubernetes API server (no cluster needed), apply
# the v1 baseline of fixtures/demo, then plan the v2 overlay with snapply and
# print the plan as text and as the markdown a PR comment shows.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

work=$(mktemp -d /tmp/snapply-demo.XXXXXX)
kubeconfig=$work/kubeconfig
pidfile=$work/cluster.pid

cleanup() {
  if [ -f "$pidfile" ]; then kill "$(cat "$pidfile")" 2>/dev/null || true; fi
  wait 2>/dev/null || true
}
trap cleanup EXIT

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "building snapply and the local API server's binaries"
go build -o bin/snapply ./cmd/snapply
go build -o "$work/localcluster" ./hack/localcluster
hack/tools.sh envtest >/dev/null

step "starting a local kube-apiserver + etcd"
"$work/localcluster" --kubeconfig "$kubeconfig" --pidfile "$pidfile" --dir "$work/cluster" >"$work/cluster.log" 2>&1 &
for _ in $(seq 1 120); do
  grep -q '^ready' "$work/cluster.log" 2>/dev/null && break
  if ! kill -0 $! 2>/dev/null; then cat "$work/cluster.log"; exit 1; fi
  sleep 0.5
done
grep -q '^ready' "$work/cluster.log" || { echo "the API server did not start:"; cat "$work/cluster.log"; exit 1; }
export KUBECONFIG=$kubeconfig
snapply() { bin/snapply "$@"; }

step "baseline: the v1 overlay, applied as snapply"
# Until `snapply apply` lands, the baseline is applied with server-side
# apply under snapply's field manager through snapply's own test helper.
go run ./hack/demoapply fixtures/demo/overlays/v1

step "snapply plan fixtures/demo/overlays/v1 (nothing to do)"
snapply plan fixtures/demo/overlays/v1 --store "$work/snapply.db" --color=always

step "snapply plan fixtures/demo/overlays/v2 (text)"
snapply plan fixtures/demo/overlays/v2 --store "$work/snapply.db" --color=always

step "snapply plan fixtures/demo/overlays/v2 -o markdown (what the PR comment shows)"
snapply plan fixtures/demo/overlays/v2 --store "$work/snapply.db" -o markdown -q

step "snapply history: every plan left a snapshot in the store"
snapply history --store "$work/snapply.db"

step "snapply show: the live Deployment as the first snapshot recorded it"
snapply show --store "$work/snapply.db" "$(snapply history --store "$work/snapply.db" -o json | sed -n 's/.*"id": "\([^"]*\)".*/\1/p' | head -1)" 'deployment.apps/web -n demo'

echo
echo "demo done. The store is $work/snapply.db; the API server is stopped on exit."
