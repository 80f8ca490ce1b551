# shellcheck shell=bash
# Start and stop hack/localcluster, and set up the work directory, for the
# scripts in hack/ (sourced).
#
# The sourcing script defines log MESSAGE and die MESSAGE, and sets work
# (a directory holding logs/ and bin/localcluster, the built
# hack/localcluster). start_cluster exports KUBECONFIG=$work/kubeconfig and
# sets cluster_pid; stop_cluster, safe to call twice and from an EXIT trap,
# stops it.

# shellcheck disable=SC2154 # work, snapply, log and die come from the sourcing script
cluster_pid=

# start_cluster [ARG...] starts hack/localcluster with the ARGs (--controllers
# for a cluster that rolls out) and waits until it says ready.
start_cluster() {
  log "starting a local API server (hack/localcluster $*)"
  export KUBECONFIG=$work/kubeconfig
  "$work/bin/localcluster" --kubeconfig "$KUBECONFIG" --pidfile "$work/cluster.pid" "$@" \
    >"$work/logs/cluster.log" 2>&1 &
  cluster_pid=$!
  local deadline=$((SECONDS + 180))
  until grep -qs '^ready:' "$work/logs/cluster.log"; do
    if ! kill -0 "$cluster_pid" 2>/dev/null; then
      tail -n 30 "$work/logs/cluster.log" >&2
      cluster_pid=
      die "hack/localcluster exited before it was ready"
    fi
    ((SECONDS < deadline)) || { tail -n 30 "$work/logs/cluster.log" >&2; die "hack/localcluster: not ready after 180s"; }
    sleep 0.5
  done
  log "$(grep '^ready:' "$work/logs/cluster.log")"
}

# stop_cluster stops the cluster start_cluster started: TERM, then KILL
# after 30 s.
stop_cluster() {
  [[ -n $cluster_pid ]] || return 0
  log "stopping the local API server"
  kill -TERM "$cluster_pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 60; i++)); do
    kill -0 "$cluster_pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$cluster_pid" 2>/dev/null; then
    log "hack/localcluster did not stop in 30s: killing it"
    kill -KILL "$cluster_pid" 2>/dev/null || true
  fi
  wait "$cluster_pid" 2>/dev/null || true
  cluster_pid=
}

# cleanup_on_exit KEEP sets the traps of a script: at exit (or on INT or
# TERM) stop the cluster, then remove $work unless KEEP is non-empty.
cleanup_on_exit() {
  keep_work=$1
  trap cleanup_work EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

cleanup_work() {
  local rc=$?
  stop_cluster
  if [[ -n $keep_work ]]; then
    log "work directory kept: $work"
  else
    rm -rf "$work"
  fi
  exit "$rc"
}

# build_bench builds bin/snapply (to $snapply) and, into $work/bin,
# hack/localcluster and hack/genfixture.
build_bench() {
  log "building bin/snapply, hack/localcluster and hack/genfixture"
  go build -o "$snapply" ./cmd/snapply
  go build -o "$work/bin/localcluster" ./hack/localcluster
  go build -o "$work/bin/genfixture" ./hack/genfixture
}
