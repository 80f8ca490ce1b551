#!/usr/bin/env bash
# make demo: start a local Kubernetes cluster (API server, controllers and
# kwok: no container runtime needed), then walk through fixtures/demo with
# snapply: plan v1, apply v1 and watch it roll out, plan v2 (text and the
# markdown a PR comment shows), apply v2, apply v2 again (nothing to do).
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
hack/tools.sh cluster >/dev/null

step "starting a local cluster: kube-apiserver, etcd, controller-manager, scheduler, kwok"
"$work/localcluster" --controllers --kubeconfig "$kubeconfig" --pidfile "$pidfile" --dir "$work/cluster" >"$work/cluster.log" 2>&1 &
for _ in $(seq 1 120); do
  grep -q '^ready' "$work/cluster.log" 2>/dev/null && break
  if ! kill -0 $! 2>/dev/null; then cat "$work/cluster.log"; exit 1; fi
  sleep 0.5
done
grep -q '^ready' "$work/cluster.log" || { echo "the API server did not start:"; cat "$work/cluster.log"; exit 1; }
export KUBECONFIG=$kubeconfig
snapply() { bin/snapply "$@"; }

db=$work/snapply.db

step "snapply plan fixtures/demo/overlays/v1: everything is new"
snapply plan fixtures/demo/overlays/v1 --store "$db" --color=always

step "snapply apply fixtures/demo/overlays/v1: waves, then wait for the rollouts"
snapply apply fixtures/demo/overlays/v1 --store "$db" --color=always --timeout 2m

step "snapply plan fixtures/demo/overlays/v2: what the pull request changes"
snapply plan fixtures/demo/overlays/v2 --store "$db" --color=always

step "snapply plan fixtures/demo/overlays/v2 -o markdown: what the PR comment shows"
snapply plan fixtures/demo/overlays/v2 --store "$db" -o markdown -q

step "snapply apply fixtures/demo/overlays/v2: update, create, prune the old generated Secret, roll out"
snapply apply fixtures/demo/overlays/v2 --store "$db" --color=always --timeout 2m

step "snapply apply fixtures/demo/overlays/v2 again: nothing to do, nothing written"
snapply apply fixtures/demo/overlays/v2 --store "$db" --color=always -q

step "the Pods the rollout left (kwok runs them: no container runtime needed)"
bin/snapply show --store "$db" latest 'deployment.apps/web -n demo' | sed -n '/^status:/,$p'

step "snapply history: every run left its snapshots in the store"
snapply history --store "$db"

echo
echo "demo done. The store is $db; the API server is stopped on exit."
