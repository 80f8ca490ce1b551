#!/usr/bin/env bash
# make demo: start a local Kubernetes cluster (API server, controllers and
# kwok: no container runtime needed), then walk through fixtures/demo with
# snapply: plan v1, apply v1 and watch it roll out, plan v2 (text and the
# markdown a PR comment shows), apply v2, apply v2 again (nothing to do).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

root=$(pwd)
work=$(mktemp -d /tmp/snapply-demo.XXXXXX)
mkdir -p "$work/logs" "$work/bin"

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
log() { printf '    %s\n' "$*" >&2; }
die() { printf 'demo: error: %s\n' "$*" >&2; exit 1; }
# shellcheck source=hack/lib/cluster.sh
source "$root/hack/lib/cluster.sh"
trap stop_cluster EXIT

step "building snapply and the local API server's binaries"
go build -o bin/snapply ./cmd/snapply
go build -o "$work/bin/localcluster" ./hack/localcluster
hack/tools.sh cluster >/dev/null

step "starting a local cluster: kube-apiserver, etcd, controller-manager, scheduler, kwok"
start_cluster --controllers --dir "$work/cluster"
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

step "snapply graph fixtures/demo/overlays/v2 -o mermaid: what the changed objects are connected to"
snapply graph fixtures/demo/overlays/v2 --store "$db" -o mermaid -q

step "snapply plan fixtures/demo/overlays/v2 -o html: the plan as one self-contained page"
snapply plan fixtures/demo/overlays/v2 --store "$db" -o html -q > "${db%.db}-plan.html"
echo "wrote ${db%.db}-plan.html ($(wc -c < "${db%.db}-plan.html") bytes): open it in a browser"

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
