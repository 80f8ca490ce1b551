#!/usr/bin/env bash
# Benchmarks snapply against the tools it replaces, side by side on one
# fresh local API server, and reports ratios measured in the same run,
# because the machines this runs on are noisy. Run by `make bench`.
#
#   hack/bench.sh
#
# Environment:
#   BENCH_NAMESPACES      namespaces in the fixture            (default 10)
#   BENCH_PER_NAMESPACE   objects per namespace                (default 100)
#   BENCH_RUNS            timed runs of each command           (default 3)
#   BENCH_SECTIONS        sections to run, space-separated     (default: all, in order)
#   BENCH_KEEP=1          keep the work directory (fixtures, stores, logs)
#
# Sections. Each section is a function `section_NAME` that times commands
# with `measure` and adds lines to the report with `row`, `ratio` and `note`.
# To add one (for example apply against kapp), write the function and
# append NAME to `sections` below. Sections run in order against the same
# server, which holds the base fixture when the first one starts; a section
# that changes the cluster must say what it leaves behind.
#
#   plan   `snapply plan` vs `kubectl diff --server-side` on the changed
#          fixture (issue acceptance: snapply at least 5x faster)
set -euo pipefail

sections=(plan)

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

namespaces=${BENCH_NAMESPACES:-10}
per_namespace=${BENCH_PER_NAMESPACE:-100}
runs=${BENCH_RUNS:-3}
read -r -a sections <<<"${BENCH_SECTIONS:-${sections[*]}}"

work=$(mktemp -d "${TMPDIR:-/tmp}/snapply-bench.XXXXXX")
snapply=$root/bin/snapply
cluster_pid=

log() { printf '%s bench: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- timing --------------------------------------------------------------

# now_us VAR sets VAR to the wall clock in microseconds: bash's
# EPOCHREALTIME (bash 5), else GNU date.
if [[ -n ${EPOCHREALTIME:-} ]]; then
  now_us() { local -n out=$1; local t=${EPOCHREALTIME}; out=${t/[.,]/}; }
else
  now_us() { local -n out=$1; out=$(($(date +%s%N) / 1000)); }
fi

# client_cpu_us VAR sets VAR to the user+system CPU time of this shell's
# finished children, in microseconds, from the `times` builtin (run in this
# shell, not in a $(...) subshell, whose children are others).
client_cpu_us() {
  local -n out=$1
  times >"$work/times"
  local -a t
  mapfile -t t <"$work/times"
  local f frac
  out=0
  for f in ${t[1]}; do
    [[ $f =~ ^([0-9]+)m([0-9]+)[.,]([0-9]+)s$ ]] || die "times: unexpected $f"
    frac=${BASH_REMATCH[3]}000000
    out=$((out + (10#${BASH_REMATCH[1]} * 60 + 10#${BASH_REMATCH[2]}) * 1000000 + 10#${frac:0:6}))
  done
}

# server_cpu_us prints the user+system CPU time of the local cluster's
# processes (etcd, kube-apiserver), in microseconds, or 0 when they cannot
# be read.
clock_ticks=$(getconf CLK_TCK 2>/dev/null || echo 100)
server_cpu_us() {
  local ticks=0 pid f
  for pid in $(pgrep -P "${cluster_pid:-0}" 2>/dev/null); do
    [[ -r /proc/$pid/stat ]] || continue
    read -r -a f <"/proc/$pid/stat" || continue
    # Fields 14 and 15 (utime, stime), counted after the "(comm)" field,
    # which holds no space for these processes.
    ticks=$((ticks + f[13] + f[14]))
  done
  echo $((ticks * 1000000 / clock_ticks))
}

# secs US prints microseconds as seconds with three decimals.
secs() { printf '%d.%03d' $(($1 / 1000000)) $(($1 % 1000000 / 1000)); }

# For each measured NAME, in microseconds, one value per run, space-separated:
# wall[NAME] the wall time, client[NAME] the CPU time of the command and its
# children, server[NAME] the CPU time of the API server and etcd meanwhile.
declare -A wall=() client=() server=()

# measure NAME OK_CODES CMD... runs CMD once with stdout discarded and
# stderr kept in $work/logs, and records its times. OK_CODES lists the exit
# codes that are not failures ("0", or "0 1" for kubectl diff, whose 1 means
# "there are differences").
measure() {
  local name=$1 ok=$2 rc=0 start end c0 c1 s0 s1 n
  shift 2
  n=$(($(wc -w <<<"${wall[$name]:-}") + 1))
  local errlog=$work/logs/$name.$n.stderr
  # Only the command runs between the two readings of each clock, so that
  # the client CPU time does not count the subshells of these functions.
  s0=$(server_cpu_us)
  client_cpu_us c0
  now_us start
  "$@" >/dev/null 2>"$errlog" || rc=$?
  now_us end
  client_cpu_us c1
  s1=$(server_cpu_us)
  if [[ " $ok " != *" $rc "* ]]; then
    log "$name run $n: exit code $rc (want ${ok// / or }): $*"
    tail -n 20 "$errlog" >&2
    exit 1
  fi
  wall[$name]="${wall[$name]:-} $((end - start))"
  client[$name]="${client[$name]:-} $((c1 - c0))"
  server[$name]="${server[$name]:-} $((s1 - s0))"
  log "$name run $n: $(secs $((end - start)))s (CPU: client $(secs $((c1 - c0)))s, server $(secs $((s1 - s0)))s)"
}

# median METRIC NAME prints the median of the runs of NAME in METRIC (wall,
# client or server), in microseconds.
median() {
  local -n m=$1
  [[ -n ${m[$2]:-} ]] || die "no runs of $2"
  local -a v
  mapfile -t v < <(tr ' ' '\n' <<<"${m[$2]}" | grep . | sort -n)
  local n=${#v[@]}
  if ((n % 2)); then echo "${v[n / 2]}"; else echo $(((v[n / 2 - 1] + v[n / 2]) / 2)); fi
}

# --- the report ----------------------------------------------------------

report=()
row_format='%-40s %10s %12s %12s   %s'

# row LABEL NAME adds the medians and the wall times of the runs of NAME.
row() {
  local label=$1 name=$2 runs_s="" t
  for t in ${wall[$name]}; do runs_s+="$(secs "$t") "; done
  # shellcheck disable=SC2059 # the format is a constant
  report+=("$(printf "$row_format" "$label" "$(secs "$(median wall "$name")")" \
    "$(secs "$(median client "$name")")" "$(secs "$(median server "$name")")" "${runs_s% }")")
}

# ratio LABEL SLOW FAST TARGET adds the ratio of the median wall times of
# SLOW and FAST, and whether it reaches TARGET (an integer; 0 for none),
# and the ratio of their median total CPU times (client + server), which
# other work on the machine disturbs less.
ratio() {
  local label=$1 target=$4 r c=-1 line fast_cpu
  r=$(($(median wall "$2") * 100 / $(median wall "$3")))
  fast_cpu=$(($(median client "$3") + $(median server "$3")))
  ((fast_cpu == 0)) || c=$((($(median client "$2") + $(median server "$2")) * 100 / fast_cpu))
  line=$(printf '%-40s %8d.%02dx' "$label" $((r / 100)) $((r % 100)))
  if ((target > 0)); then
    if ((r >= target * 100)); then line+="  (target >= ${target}x: met)"; else line+="  (target >= ${target}x: NOT MET)"; fi
  fi
  ((c < 0)) || line+=$(printf '   CPU (client+server): %d.%02dx' $((c / 100)) $((c % 100)))
  report+=("$line")
}

# note TEXT adds a line as is.
note() { report+=("$*"); }

# header adds the column titles of row.
header() {
  # shellcheck disable=SC2059 # the format is a constant
  report+=("$(printf "$row_format" "" "wall (s)" "client CPU" "server CPU" "wall of each run (s)")")
}

print_report() {
  echo
  echo "== snapply benchmark: $(date -u +%FT%TZ), $(nproc) CPUs, $runs runs each, alternating =="
  printf '%s\n' "${report[@]}"
  echo "load average after the sections: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "(medians; client CPU: the command and its children; server CPU: etcd + kube-apiserver meanwhile)"
}

# --- setup ---------------------------------------------------------------

cleanup() {
  local rc=$?
  stop_cluster
  if [[ -n ${BENCH_KEEP:-} ]]; then
    log "work directory kept: $work"
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

build() {
  log "building bin/snapply, hack/localcluster and hack/genfixture"
  go build -o "$snapply" ./cmd/snapply
  go build -o "$work/bin/localcluster" ./hack/localcluster
  go build -o "$work/bin/genfixture" ./hack/genfixture
}

tools() {
  log "ensuring tools (hack/tools.sh bench)"
  local dir
  dir=$(hack/tools.sh bench | tail -n 1)
  tools_versions=$(basename "$dir")
  export PATH="$dir:$PATH"
  kubectl=$dir/kubectl
  # shellcheck disable=SC2034 # for sections that compare apply with kapp
  kapp=$dir/kapp
  [[ -x $kubectl ]] || die "kubectl: not found in $dir"
}

start_cluster() {
  log "starting a local API server (hack/localcluster)"
  export KUBECONFIG=$work/kubeconfig
  "$work/bin/localcluster" --kubeconfig "$KUBECONFIG" --pidfile "$work/cluster.pid" >"$work/logs/cluster.log" 2>&1 &
  cluster_pid=$!
  local deadline=$((SECONDS + 180))
  until grep -q '^ready:' "$work/logs/cluster.log"; do
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

# fixture VARIANT generates $work/VARIANT and sets fixture_objects,
# fixture_changed and fixture_added from genfixture's summary line.
fixture() {
  local out
  out=$("$work/bin/genfixture" --out "$work/$1" --namespaces "$namespaces" --per-namespace "$per_namespace" --variant "$1")
  [[ $out =~ wrote\ ([0-9]+)\ objects.*\(([0-9]+)\ changed,\ ([0-9]+)\ added\) ]] || die "genfixture: unexpected summary: $out"
  fixture_objects=${BASH_REMATCH[1]}
  fixture_changed=${BASH_REMATCH[2]}
  fixture_added=${BASH_REMATCH[3]}
  log "$out"
}

# apply_base brings the server to the state a real `snapply apply` of the
# base fixture leaves: the fields owned by the field manager snapply, and
# every object a member of snapply's inventory (ApplySet label and parent
# Secret). It applies the base with `kubectl apply --server-side
# --field-manager=snapply` first (so the ownership does not depend on
# snapply apply, and the time is a reference for apply sections), then with
# `snapply apply --wait=false`, which adds only the inventory: no controller
# runs, so nothing would become ready. Then it checks that every object is
# there and labelled.
apply_base() {
  log "applying the base fixture ($base_objects objects) with kubectl apply --server-side --field-manager=snapply"
  measure base-kubectl-apply 0 "$kubectl" apply --server-side --field-manager=snapply -f "$work/base"
  log "adopting it into snapply's inventory with snapply apply --wait=false"
  measure base-snapply-adopt 0 "$snapply" apply "$work/base" --store "$work/apply.db" --wait=false -q
  "$kubectl" wait --for=jsonpath='{.status.phase}'=Active namespace -l app.kubernetes.io/part-of=snapply-bench --timeout=120s >/dev/null
  local got
  got=$("$kubectl" get namespaces,configmaps,deployments.apps,services -A --no-headers \
    -l app.kubernetes.io/part-of=snapply-bench,applyset.kubernetes.io/part-of | wc -l)
  ((got == base_objects)) || die "the server holds $got objects of the base fixture in snapply's inventory, want $base_objects"
}

# --- sections ------------------------------------------------------------

# section_plan times `snapply plan` and `kubectl diff --server-side` on the
# changed fixture, alternating, each with the same field manager. Each
# snapply run starts from a new store file, as a CI job does. The cluster
# is left as it was.
section_plan() {
  local changed=$work/changed store=$work/plan.db i

  # One untimed run of each, which checks that both see the changes the
  # fixture makes (and, for snapply, only those) and warms both clients
  # alike (kubectl's discovery cache was filled by the base apply). The
  # snapply run prints its stage timings.
  log "warm-up: snapply plan (stage timings follow)"
  rm -f "$store"
  "$snapply" plan "$changed" --store "$store" -o json >"$work/plan.json" 2>"$work/logs/plan-warmup.stderr" ||
    { cat "$work/logs/plan-warmup.stderr" >&2; die "snapply plan failed"; }
  sed 's/^/    /' "$work/logs/plan-warmup.stderr" >&2
  if command -v jq >/dev/null; then
    local summary want
    summary=$(jq -c .summary "$work/plan.json")
    want=$(jq -cn --argjson c "$fixture_added" --argjson u "$fixture_changed" --argjson n "$((fixture_objects - fixture_added - fixture_changed))" \
      '{create: $c, update: $u, unchanged: $n, delete: 0, conflict: 0, invalid: 0, pending: 0}')
    log "snapply plan summary: $summary"
    # A plan that sees other changes than the fixture makes would time
    # something else than what this benchmark claims to.
    [[ $(jq -cS . <<<"$summary") == $(jq -cS . <<<"$want") ]] || die "snapply plan: summary $summary, want $want"
  else
    log "jq not found: not checking the plan's summary"
  fi
  log "warm-up: kubectl diff --server-side"
  local rc=0
  "$kubectl" diff --server-side --field-manager=snapply -f "$changed" >"$work/kubectl.diff" 2>"$work/logs/diff-warmup.stderr" || rc=$?
  ((rc == 1)) || { cat "$work/logs/diff-warmup.stderr" >&2; die "kubectl diff: exit code $rc, want 1 (differences)"; }

  for ((i = 1; i <= runs; i++)); do
    rm -f "$store"
    measure plan 0 "$snapply" plan "$changed" --store "$store" -q -o json
    measure diff "0 1" "$kubectl" diff --server-side --field-manager=snapply -f "$changed"
  done

  row "snapply plan -q -o json" plan
  row "kubectl diff --server-side" diff
  ratio "ratio kubectl diff / snapply plan" diff plan 5
  note "$(printf '%-40s %10s   (%s bytes; a new store per run)' "snapply store file" "$(du -h "$store" | cut -f1)" "$(stat -c %s "$store")")"
}

# --- main ----------------------------------------------------------------

for s in "${sections[@]}"; do
  declare -F "section_$s" >/dev/null || die "unknown section $s (have: $(declare -F | sed -n 's/^declare -f section_//p' | tr '\n' ' '))"
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS: $runs: want a positive integer"

mkdir -p "$work/logs" "$work/bin"
build
tools
start_cluster

fixture base
base_objects=$fixture_objects
fixture changed
apply_base

note "objects: $base_objects applied (base), $fixture_objects planned (changed: $fixture_changed changed, $fixture_added added), $namespaces namespaces"
note "server: hack/localcluster (etcd + kube-apiserver, no controllers); tools: $tools_versions"
note "load average before the sections: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews single numbers; compare ratios)"
header
row "(once) kubectl apply --server-side, base" base-kubectl-apply
row "(once) then snapply apply --wait=false" base-snapply-adopt
for s in "${sections[@]}"; do
  log "section $s"
  "section_$s"
done
print_report
