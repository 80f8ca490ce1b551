#!/usr/bin/env bash
# Measures the wall time and the peak memory (maximum resident set size) of
# snapply on a large fixture, on one fresh local API server, and fails when
# a peak is over the limit. The issue's acceptance: "plan and apply of 5,000
# objects across 50 namespaces complete with peak memory under 300 MiB".
#
#   hack/loadbench.sh
#
# Steps, in order, each a separate `snapply` process with a new store file
# (as a CI job starts), timed by /usr/bin/time (%e wall seconds, %M peak RSS):
#
#   plan-base      `snapply plan` of the base fixture, onto an empty cluster
#   apply-base     `snapply apply --wait=false` of it (creates everything)
#   plan-changed   `snapply plan` of the changed fixture (~10% changed, 2
#                  objects added per namespace)
#   apply-changed  `snapply apply --wait=false` of it
#
# Nothing waits for readiness: the server runs no controllers.
#
# Environment:
#   LOADBENCH_NAMESPACES     namespaces in the fixture        (default 50)
#   LOADBENCH_PER_NAMESPACE  objects per namespace            (default 100)
#   LOADBENCH_LIMIT_MIB      peak RSS limit of every step     (default 300)
#   LOADBENCH_KEEP=1         keep the work directory (fixtures, stores, outputs, logs)
#   LOADBENCH_SNAPPLY_ENV    VAR=VALUE words set for the snapply steps only
#                            (not the API server), e.g. "GOGC=50" or
#                            "GODEBUG=gctrace=1" (its lines go to the kept logs)
#   SNAPPLY_MEMPROFILE_DIR   when set, each step writes heap profiles through
#                            snapply's hidden SNAPPLY_MEMPROFILE hook:
#                            DIR/STEP.pprof.peak at the peak of the live heap
#                            (go tool pprof -sample_index=inuse_space bin/snapply FILE)
#                            and DIR/STEP.pprof at exit (-sample_index=alloc_space)
#
# Exit code: 0 when every step succeeds under the limit, 1 otherwise.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

namespaces=${LOADBENCH_NAMESPACES:-50}
per_namespace=${LOADBENCH_PER_NAMESPACE:-100}
limit_mib=${LOADBENCH_LIMIT_MIB:-300}
profiles=${SNAPPLY_MEMPROFILE_DIR:-}

work=$(mktemp -d "${TMPDIR:-/tmp}/snapply-loadbench.XXXXXX")
snapply=$root/bin/snapply

log() { printf '%s loadbench: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=hack/lib/cluster.sh
source "$root/hack/lib/cluster.sh"

[[ $namespaces =~ ^[1-9][0-9]*$ ]] || die "LOADBENCH_NAMESPACES: $namespaces: want a positive integer"
[[ $per_namespace =~ ^[1-9][0-9]*$ ]] || die "LOADBENCH_PER_NAMESPACE: $per_namespace: want a positive integer"
[[ $limit_mib =~ ^[1-9][0-9]*$ ]] || die "LOADBENCH_LIMIT_MIB: $limit_mib: want a positive integer"
[[ -x /usr/bin/time ]] || die "/usr/bin/time: not found (GNU time; apt-get install time)"

# --- setup ---------------------------------------------------------------

cleanup_on_exit "${LOADBENCH_KEEP:-}"

# fixture VARIANT generates the fixture into $work/VARIANT and sets
# fixture_summary to genfixture's summary line.
fixture() {
  fixture_summary=$("$work/bin/genfixture" --out "$work/$1" \
    --namespaces "$namespaces" --per-namespace "$per_namespace" --variant "$1")
  [[ $fixture_summary =~ wrote\ ([0-9]+)\ objects ]] || die "genfixture: unexpected summary: $fixture_summary"
  objects[$1]=${BASH_REMATCH[1]}
  log "$fixture_summary"
}

# --- measuring -----------------------------------------------------------

# The steps in the order they ran; for each, its wall time (s), peak RSS
# (KiB) and the number of objects of its fixture; the objects of each
# fixture variant.
steps=()
declare -A wall=() rss=() step_objects=() objects=()

# measure STEP VARIANT CMD... runs CMD under /usr/bin/time with stdout in
# $work/out/STEP and stderr in $work/logs/STEP.stderr, and records its wall
# time and peak RSS. A failing CMD fails the script.
measure() {
  local step=$1 variant=$2 rc=0 timing
  shift 2
  local tf=$work/logs/$step.time
  log "$step: $*"
  local -a vars
  read -r -a vars <<<"${LOADBENCH_SNAPPLY_ENV:-}"
  [[ -z $profiles ]] || vars+=("SNAPPLY_MEMPROFILE=$profiles/$step.pprof")
  env "${vars[@]}" /usr/bin/time -o "$tf" -f '%e s %M KiB' "$@" >"$work/out/$step" 2>"$work/logs/$step.stderr" || rc=$?
  if ((rc != 0)); then
    tail -n 20 "$work/logs/$step.stderr" >&2
    [[ ! -s $tf ]] || cat "$tf" >&2
    die "$step: exit code $rc"
  fi
  # GNU time writes "Command exited with non-zero status N" first when the
  # command fails; the numbers are on the last line.
  timing=$(tail -n 1 "$tf")
  [[ $timing =~ ^([0-9]+\.[0-9]+)\ s\ ([0-9]+)\ KiB$ ]] || die "$step: unexpected /usr/bin/time output: $timing"
  steps+=("$step")
  wall[$step]=${BASH_REMATCH[1]}
  rss[$step]=${BASH_REMATCH[2]}
  step_objects[$step]=${objects[$variant]}
  log "$step: ${wall[$step]}s, peak RSS $(mib "${rss[$step]}") MiB"
}

# mib KIB prints KiB as MiB with one decimal.
mib() { printf '%d.%d' $(($1 / 1024)) $(($1 % 1024 * 10 / 1024)); }

# snapply_step STEP VARIANT COMMAND [FLAGS...] runs `snapply COMMAND` on the
# fixture VARIANT with a new store file, under measure.
snapply_step() {
  local step=$1 variant=$2 command=$3
  shift 3
  measure "$step" "$variant" "$snapply" "$command" "$work/$variant" --store "$work/stores/$step.db" -o json "$@"
}

# check_summary STEP VARIANT ZERO SUM fails unless the "summary" of the JSON
# output of STEP has 0 for each key in ZERO, and its keys in SUM add up to
# the objects of the fixture VARIANT, so that a step that did less than its
# whole fixture does not pass as fast. Skipped without jq.
check_summary() {
  local step=$1 variant=$2 zero=$3 sum=$4 key n total=0
  command -v jq >/dev/null || { log "jq not found: not checking the output of $step"; return 0; }
  log "$step summary: $(jq -c .summary "$work/out/$step")"
  for key in $zero; do
    n=$(jq -r ".summary.$key // 0" "$work/out/$step")
    [[ $n == 0 ]] || die "$step: summary.$key is $n, want 0"
  done
  for key in $sum; do
    n=$(jq -r ".summary.$key // 0" "$work/out/$step")
    total=$((total + n))
  done
  ((total == objects[$variant])) || die "$step: summary ${sum// /+} is $total, want the ${objects[$variant]} objects of the fixture"
}

# --- main ----------------------------------------------------------------

mkdir -p "$work/logs" "$work/bin" "$work/out" "$work/stores"
[[ -z $profiles ]] || mkdir -p "$profiles"
build_bench
# shellcheck disable=SC2119 # no arguments: a cluster without controllers
start_cluster

fixture base
fixture changed

plan_zero="conflict invalid delete" plan_sum="create update unchanged pending"
apply_zero="failed notAttempted pruned" apply_sum="applied unchanged"
snapply_step plan-base base plan
check_summary plan-base base "$plan_zero" "$plan_sum"
snapply_step apply-base base apply --wait=false
check_summary apply-base base "$apply_zero" "$apply_sum"
snapply_step plan-changed changed plan
check_summary plan-changed changed "$plan_zero" "$plan_sum"
snapply_step apply-changed changed apply --wait=false
check_summary apply-changed changed "$apply_zero" "$apply_sum"

limit_kib=$((limit_mib * 1024))
failed=0
echo
echo "== snapply load: $(date -u +%FT%TZ), $(nproc) CPUs, $namespaces namespaces x $per_namespace objects; peak RSS limit $limit_mib MiB =="
printf '%-16s %8s %10s %14s   %s\n' step objects "wall (s)" "peak RSS (MiB)" ""
for step in "${steps[@]}"; do
  verdict=ok
  if ((rss[$step] > limit_kib)); then
    verdict="OVER THE LIMIT"
    failed=1
  fi
  printf '%-16s %8d %10s %14s   %s\n' "$step" "${step_objects[$step]}" "${wall[$step]}" "$(mib "${rss[$step]}")" "$verdict"
done
[[ -z ${LOADBENCH_SNAPPLY_ENV:-} ]] || echo "snapply environment: $LOADBENCH_SNAPPLY_ENV"
echo "store files: $(du -ch "$work"/stores/*.db | tail -n 1 | cut -f1) in all; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
[[ -z $profiles ]] || echo "heap profiles: $profiles"
if ((failed)); then
  log "peak memory over $limit_mib MiB"
  exit 1
fi
