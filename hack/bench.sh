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
# To add one, write the function and append NAME to `sections` below.
# Sections run in order against the same server, which holds the base
# fixture when the first one starts; a section that changes the cluster must
# say what it leaves behind.
#
#   plan   `snapply plan` vs `kubectl diff --server-side` on the changed
#          fixture (issue acceptance: snapply at least 5x faster)
#   apply  `snapply apply --wait=false` vs `kubectl apply --server-side` vs
#          `kapp deploy --wait=false`: create (the base fixture into new
#          namespaces), then update (the changed fixture on top), each tool
#          on its own copy of the fixture (issue acceptance: snapply at
#          least 10x faster than kubectl, and no slower than kapp)
#   policy `snapply plan` with and without --policy examples/policies on the
#          changed fixture, and the time the policy evaluation itself takes
#          as a share of the plan (issue 13 acceptance: under 20%)
#   known  plans and applies in proportion to the change (issue 15): a
#          no-op plan of the base fixture, a plan of the changed1 fixture
#          (1% of the objects changed), and its apply, each for snapply
#          with the record of the last apply, snapply --revalidate,
#          kubectl diff/apply --server-side and kapp deploy --diff-run/deploy
#          (targets: fractions of the other tools' times)
set -euo pipefail

sections=(plan apply policy known)

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

namespaces=${BENCH_NAMESPACES:-10}
per_namespace=${BENCH_PER_NAMESPACE:-100}
runs=${BENCH_RUNS:-3}
read -r -a sections <<<"${BENCH_SECTIONS:-${sections[*]}}"

work=$(mktemp -d "${TMPDIR:-/tmp}/snapply-bench.XXXXXX")
snapply=$root/bin/snapply

log() { printf '%s bench: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=hack/lib/cluster.sh
source "$root/hack/lib/cluster.sh"

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

cleanup_on_exit "${BENCH_KEEP:-}"

tools() {
  log "ensuring tools (hack/tools.sh bench)"
  local dir
  dir=$(hack/tools.sh bench | tail -n 1)
  tools_versions=$(basename "$dir")
  export PATH="$dir:$PATH"
  kubectl=$dir/kubectl
  kapp=$dir/kapp
  [[ -x $kubectl ]] || die "kubectl: not found in $dir"
  [[ -x $kapp ]] || die "kapp: not found in $dir"
}

# fixture VARIANT [PREFIX DIR] generates the fixture in namespaces
# PREFIX-00, PREFIX-01, ... (default bench) into DIR (default
# $work/VARIANT), and sets fixture_objects, fixture_changed and
# fixture_added from genfixture's summary line, which it logs unless
# fixture_quiet is set.
fixture() {
  local out
  out=$("$work/bin/genfixture" --out "${3:-$work/$1}" --prefix "${2:-bench}" \
    --namespaces "$namespaces" --per-namespace "$per_namespace" --variant "$1")
  [[ $out =~ wrote\ ([0-9]+)\ objects.*\(([0-9]+)\ changed,\ ([0-9]+)\ added\) ]] || die "genfixture: unexpected summary: $out"
  fixture_objects=${BASH_REMATCH[1]}
  fixture_changed=${BASH_REMATCH[2]}
  fixture_added=${BASH_REMATCH[3]}
  [[ -n ${fixture_quiet:-} ]] || log "$out"
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

# dur_ms prints a Go duration ("118ms", "1.5s", "1m2s", "950µs") in
# milliseconds.
dur_ms() {
  awk -v d="$1" 'BEGIN {
    ms = 0
    while (match(d, /^[0-9.]+(ms|µs|us|ns|s|m|h)/)) {
      tok = substr(d, 1, RLENGTH); d = substr(d, RLENGTH + 1)
      match(tok, /[a-zµ]+$/); u = substr(tok, RSTART); n = substr(tok, 1, RSTART - 1) + 0
      if (u == "h") ms += n * 3600000; else if (u == "m") ms += n * 60000; else if (u == "s") ms += n * 1000
      else if (u == "ms") ms += n; else if (u == "µs" || u == "us") ms += n / 1000; else ms += n / 1000000
    }
    printf "%d\n", ms
  }'
}

# analysis_share CHANGED STORE plans CHANGED with progress on and reports
# the share of the plan stage (snapshot, dry runs, analysis) that the
# analyses take (field diffs, risks, broken references, images; issue 11
# acceptance: under 10%), from snapply's own stage timings.
analysis_share() {
  local changed=$1 store=$2 i errlog a t shares=""
  for ((i = 1; i <= runs; i++)); do
    rm -f "$store"
    errlog=$work/logs/plan-stages.$i.stderr
    "$snapply" plan "$changed" --store "$store" -o json >/dev/null 2>"$errlog" || die "snapply plan failed"
    a=$(sed -n 's/.*analyzed the plan .* in \([^ ]*\)$/\1/p' "$errlog")
    t=$(sed -n 's/^ *planned [0-9]* objects in \([^ :]*\)[: ].*(snapshot .*/\1/p' "$errlog")
    [[ -n $a && -n $t ]] || die "no stage timings in $errlog"
    a=$(dur_ms "$a") t=$(dur_ms "$t")
    log "plan stages run $i: analysis ${a}ms of ${t}ms"
    shares+="$((a * 1000 / (t > 0 ? t : 1))) "
  done
  local -a v
  mapfile -t v < <(tr ' ' '\n' <<<"$shares" | grep . | sort -n)
  local med=${v[${#v[@]} / 2]}
  note "$(printf '%-40s %9s%%   (median of %d runs; target under 10%%)' "analyses / plan stage" "$((med / 10)).$((med % 10))" "${#v[@]}")"
}

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
  analysis_share "$changed" "$store"
  note "$(printf '%-40s %10s   (%s bytes; a new store per run)' "snapply store file" "$(du -h "$store" | cut -f1)" "$(stat -c %s "$store")")"
}

# section_apply times, for each tool, a create (the base fixture applied
# into namespaces that do not exist yet) and then an update (the changed
# fixture applied on top):
#
#   snapply apply DIR --wait=false --name bench-snapply-rN --inventory-namespace default -o json
#   kubectl apply --server-side --field-manager=kubectl-bench -f DIR
#   kapp deploy -a bench-kapp-rN -n default -f DIR --yes --wait=false --diff-changes=false
#
# Each tool applies its own copy of the fixture (namespaces TOOL-rN-00,
# TOOL-rN-01, ...), so that no tool finds objects, field managers or
# inventory labels of another. Each round N of the runs uses new namespaces
# and a new inventory (snapply) or app (kapp), rather than deleting the
# previous ones: on this server, which runs no controllers, a deleted
# Namespace stays Terminating forever, and a server with controllers would
# roll out every Deployment (ReplicaSets and Pods) while the others are
# timed. The cost is a server that grows by a copy of the fixture per tool
# and round; the order of the tools rotates from round to round so that
# none always runs on the largest one. Nothing waits for readiness: no
# controller runs. Each snapply run starts from a new store file, as a CI
# job does, and prints its progress lines (only -q is left out, which
# changes nothing but those lines on stderr); the report shows those of its
# median run with the time each line came, which tells where the time goes
# whatever the lines say. After each update, the section checks that the
# tool's namespaces hold every object of the changed fixture with its
# images.
#
# It leaves behind the 3 x BENCH_RUNS copies of the fixture, with the
# snapply inventories and kapp app records in namespace default.
section_apply() {
  local tools=(snapply kubectl kapp) round k tool prefix
  local fixture_objects fixture_changed fixture_added # not the globals of section_plan
  local base_count changed_count fixture_quiet=1

  log "generating a copy of the fixture per tool and round"
  for ((round = 1; round <= runs; round++)); do
    for tool in "${tools[@]}"; do
      prefix=$tool-r$round
      fixture base "$prefix" "$work/apply/$prefix/base"
      base_count=$fixture_objects
      fixture changed "$prefix" "$work/apply/$prefix/changed"
      changed_count=$fixture_objects
    done
  done

  for ((round = 1; round <= runs; round++)); do
    for ((k = 0; k < ${#tools[@]}; k++)); do
      tool=${tools[(k + round - 1) % ${#tools[@]}]}
      prefix=$tool-r$round
      apply_with "$tool" create "$round" "$work/apply/$prefix/base"
      apply_with "$tool" update "$round" "$work/apply/$prefix/changed"
      check_applied "$prefix" "$work/apply/$prefix/changed"
    done
  done

  note ""
  note "apply: each tool on its own copy of the fixture; create: $base_count objects into new namespaces; update: $changed_count objects on top ($fixture_changed changed, $fixture_added added)"
  row "snapply apply --wait=false, create" apply-snapply-create
  row "kubectl apply --server-side, create" apply-kubectl-create
  row "kapp deploy --wait=false, create" apply-kapp-create
  ratio "ratio kubectl / snapply, create" apply-kubectl-create apply-snapply-create 10
  ratio "ratio kapp / snapply, create" apply-kapp-create apply-snapply-create 1
  row "snapply apply --wait=false, update" apply-snapply-update
  row "kubectl apply --server-side, update" apply-kubectl-update
  row "kapp deploy --wait=false, update" apply-kapp-update
  ratio "ratio kubectl / snapply, update" apply-kubectl-update apply-snapply-update 10
  ratio "ratio kapp / snapply, update" apply-kapp-update apply-snapply-update 1
  breakdown apply-snapply-create "snapply apply, create"
  breakdown apply-snapply-update "snapply apply, update"
}

# section_known times what a pull request costs once the cluster holds the
# fixture: a no-op plan of the base fixture, a plan of the changed1 fixture
# (1% of the objects changed, none added), and the apply of it, for
#
#   snapply plan/apply DIR --name known-snapply --store KNOWN.db   (the record of the last apply)
#   snapply plan/apply DIR ... --revalidate                        (every object dry-run)
#   kubectl diff/apply --server-side --field-manager=kubectl-bench -f DIR
#   kapp deploy -a known-kapp -f DIR --diff-run / --wait=false
#
# Each tool works on its own copy of the fixture (namespaces known-TOOL-NN),
# applied once, untimed, before the runs. A snapply plan starts from a copy
# of the store that the last apply left (as a pull request's job that
# downloaded its artifact). Every timed apply of the changed1 fixture is
# followed by an untimed apply of the base with the same tool, so that each
# plan and apply starts from the base. It leaves the three copies behind,
# at the base.
section_known() {
  local tool dir i store=$work/known.db run_store=$work/known-run.db
  local fixture_objects fixture_changed fixture_added fixture_quiet=1
  for tool in snapply kubectl kapp; do
    fixture base "known-$tool" "$work/known/$tool/base"
    fixture changed1 "known-$tool" "$work/known/$tool/changed1"
  done
  local changed1_changed=$fixture_changed objects=$fixture_objects

  log "applying a copy of the base fixture per tool (untimed)"
  rm -f "$store"
  for tool in snapply kubectl kapp; do
    known_apply "$tool" base >/dev/null 2>"$work/logs/known-setup.stderr" ||
      { cat "$work/logs/known-setup.stderr" >&2; die "$tool: applying the base failed"; }
  done

  # A check that the record works: the no-op plan dry-runs nothing.
  cp "$store" "$run_store"
  "$snapply" plan "$work/known/snapply/base" --name known-snapply --inventory-namespace default \
    --store "$run_store" -o json >"$work/known-plan.json" 2>"$work/logs/known-warmup.stderr" ||
    { cat "$work/logs/known-warmup.stderr" >&2; die "snapply plan failed"; }
  sed 's/^/    /' "$work/logs/known-warmup.stderr" >&2
  if command -v jq >/dev/null; then
    local dry
    dry=$(jq '[.changes[] | select(.verified == "dry-run")] | length' "$work/known-plan.json")
    ((dry == 0)) || die "snapply plan with the record dry-ran $dry objects of an unchanged fixture, want 0"
  fi

  for ((i = 1; i <= runs; i++)); do
    for dir in base changed1; do
      cp "$store" "$run_store"
      measure "known-plan-$dir-snapply" 0 stamp_stderr "$snapply" plan "$work/known/snapply/$dir" \
        --name known-snapply --inventory-namespace default --store "$run_store" -o json
      cp "$store" "$run_store"
      measure "known-plan-$dir-revalidate" 0 "$snapply" plan "$work/known/snapply/$dir" \
        --name known-snapply --inventory-namespace default --store "$run_store" -q -o json --revalidate
      measure "known-plan-$dir-kubectl" "0 1" "$kubectl" diff --server-side --field-manager=kubectl-bench -f "$work/known/kubectl/$dir"
      measure "known-plan-$dir-kapp" 0 "$kapp" deploy -a known-kapp -n default -f "$work/known/kapp/$dir" \
        --diff-run --diff-changes=false --kubeconfig "$KUBECONFIG"
    done
    for tool in snapply revalidate kubectl kapp; do
      measure "known-apply-$tool" 0 known_apply "$tool" changed1
      known_apply "$tool" base >/dev/null 2>"$work/logs/known-restore.stderr" ||
        { cat "$work/logs/known-restore.stderr" >&2; die "$tool: restoring the base failed"; }
    done
  done

  note ""
  note "known: each tool on its own copy of the fixture ($objects objects); changed1: $changed1_changed changed, none added; snapply with the record of the last apply (a copy of its store per plan) and with --revalidate"
  local case label
  for case in base changed1; do
    label="no-op plan"
    [[ $case == base ]] || label="1% changed plan"
    row "snapply plan, $label" "known-plan-$case-snapply"
    row "snapply plan --revalidate, $label" "known-plan-$case-revalidate"
    row "kubectl diff --server-side, $label" "known-plan-$case-kubectl"
    row "kapp deploy --diff-run, $label" "known-plan-$case-kapp"
  done
  row "snapply apply, 1% changed" known-apply-snapply
  row "snapply apply --revalidate, 1% changed" known-apply-revalidate
  row "kubectl apply --server-side, 1% changed" known-apply-kubectl
  row "kapp deploy --wait=false, 1% changed" known-apply-kapp
  share "no-op plan: snapply / kubectl diff" known-plan-base-snapply known-plan-base-kubectl 10
  share "no-op plan: snapply / kapp --diff-run" known-plan-base-snapply known-plan-base-kapp 50
  share "1% plan: snapply / kubectl diff" known-plan-changed1-snapply known-plan-changed1-kubectl 15
  share "1% plan: snapply / kapp --diff-run" known-plan-changed1-snapply known-plan-changed1-kapp 60
  share "1% apply: snapply / kapp deploy" known-apply-snapply known-apply-kapp 50
  share "1% apply: snapply / kubectl apply" known-apply-snapply known-apply-kubectl 0
  share "no-op plan: --revalidate / kubectl diff" known-plan-base-revalidate known-plan-base-kubectl 0
  share "1% plan: --revalidate / kubectl diff" known-plan-changed1-revalidate known-plan-changed1-kubectl 0
  share "1% apply: --revalidate / kapp deploy" known-apply-revalidate known-apply-kapp 0
  share "no-op plan: snapply / --revalidate" known-plan-base-snapply known-plan-base-revalidate 0
  breakdown known-plan-base-snapply "snapply plan with the record, no-op"
  profile_noop
}

# profile_noop runs the no-op plan with the record once more with a CPU
# profile (SNAPPLY_CPUPROFILE), and adds the functions that took the most
# CPU time, cumulative, to the report: where a plan that dry-runs nothing
# spends its time (render, LIST, decode, hashing, store write).
profile_noop() {
  local prof=$work/known-noop.pprof
  cp "$work/known.db" "$work/known-run.db"
  SNAPPLY_CPUPROFILE=$prof "$snapply" plan "$work/known/snapply/base" --name known-snapply \
    --inventory-namespace default --store "$work/known-run.db" -q -o json >/dev/null ||
    die "snapply plan with a CPU profile failed"
  note "CPU profile of one no-op plan with the record (go tool pprof -top -cum, snapply's own and the biggest callees):"
  local line
  while IFS= read -r line; do note "  $line"; done < <(go tool pprof -top -cum -nodecount=40 "$snapply" "$prof" 2>/dev/null |
    grep -E '^ *(flat|[0-9])' | grep -E 'flat|snapply|json|yaml|Hash|bbolt|ioutil|io\.|decode|Decode|Unmarshal|gc|kustomize|transport' | head -n 30)
}

# known_apply TOOL VARIANT applies the known section's copy of VARIANT with
# TOOL: snapply, revalidate (snapply --revalidate), kubectl or kapp.
known_apply() {
  local tool=$1 dir=$work/known/${1/revalidate/snapply}/$2
  case $tool in
  snapply | revalidate)
    local extra=()
    [[ $tool == snapply ]] || extra=(--revalidate)
    "$snapply" apply "$dir" --wait=false --name known-snapply --inventory-namespace default \
      --store "$work/known.db" -q -o json "${extra[@]}"
    ;;
  kubectl) "$kubectl" apply --server-side --field-manager=kubectl-bench -f "$dir" ;;
  kapp)
    "$kapp" deploy -a known-kapp -n default -f "$dir" --yes --wait=false --diff-changes=false \
      --kubeconfig "$KUBECONFIG"
    ;;
  *) die "known_apply: unknown tool $tool" ;;
  esac
}

# share LABEL FAST SLOW TARGET adds FAST's median wall time as a fraction
# of SLOW's ("0.07x"), and whether it is at most TARGET hundredths (0 for
# no target), with the same fraction of total CPU (client + server).
share() {
  local label=$1 target=$4 r c=-1 line slow_cpu t
  r=$(($(median wall "$2") * 100 / $(median wall "$3")))
  slow_cpu=$(($(median client "$3") + $(median server "$3")))
  ((slow_cpu == 0)) || c=$((($(median client "$2") + $(median server "$2")) * 100 / slow_cpu))
  line=$(printf '%-44s %4d.%02dx' "$label" $((r / 100)) $((r % 100)))
  if ((target > 0)); then
    t=$(printf '%d.%02dx' $((target / 100)) $((target % 100)))
    if ((r <= target)); then line+="  (target <= $t: met)"; else line+="  (target <= $t: NOT MET)"; fi
  fi
  ((c < 0)) || line+=$(printf '   CPU (client+server): %d.%02dx' $((c / 100)) $((c % 100)))
  report+=("$line")
}

# apply_with TOOL PHASE ROUND DIR times TOOL applying DIR, as
# apply-TOOL-PHASE.
apply_with() {
  local tool=$1 phase=$2 round=$3 dir=$4
  case $tool in
  snapply)
    local store=$work/apply-bench.db
    rm -f "$store"
    measure "apply-snapply-$phase" 0 stamp_stderr "$snapply" apply "$dir" --wait=false \
      --name "bench-snapply-r$round" --inventory-namespace default --store "$store" -o json
    ;;
  kubectl)
    measure "apply-kubectl-$phase" 0 "$kubectl" apply --server-side --field-manager=kubectl-bench -f "$dir"
    ;;
  kapp)
    measure "apply-kapp-$phase" 0 "$kapp" deploy -a "bench-kapp-r$round" -n default -f "$dir" \
      --yes --wait=false --diff-changes=false --kubeconfig "$KUBECONFIG"
    ;;
  *) die "apply_with: unknown tool $tool" ;;
  esac
}

# check_applied PREFIX DIR fails unless the namespaces PREFIX-NN hold every
# object of the fixture in DIR, and their Deployments run the fixture's
# images: a tool that exits 0 without applying would otherwise look fast.
check_applied() {
  local prefix=$1 dir=$2 want got want_images got_images
  want=$(grep -c '^kind: ' "$dir"/*.yaml | awk -F: '{ n += $NF } END { print n }')
  got=$("$kubectl" get namespaces -o name | grep -c "^namespace/$prefix-" || true)
  got=$((got + $("$kubectl" get configmaps,deployments.apps,services -A --no-headers \
    -l app.kubernetes.io/part-of=snapply-bench -o custom-columns=NS:.metadata.namespace |
    grep -c "^$prefix-" || true)))
  ((got == want)) || die "$prefix: the server holds $got objects of the fixture, want $want"
  want_images=$(grep -h '^[ -]*image: ' "$dir"/*.yaml | awk '{ print $NF }' | sort | uniq -c)
  got_images=$("$kubectl" get deployments.apps -A --no-headers \
    -o 'custom-columns=NS:.metadata.namespace,IMAGE:.spec.template.spec.containers[0].image' |
    awk -v p="$prefix-" 'index($1, p) == 1 { print $2 }' | sort | uniq -c)
  [[ $got_images == "$want_images" ]] || die "$prefix: the Deployments run images"$'\n'"$got_images"$'\n'"want"$'\n'"$want_images"
}

# stamp_stderr CMD... runs CMD with each line it writes to stderr prefixed
# with the microseconds since CMD started. It runs in this shell, so that
# measure counts CMD as its child; the reader of the lines costs a few
# milliseconds of client CPU.
stamp_stderr() {
  local t0 rc=0 before=${!:-}
  now_us t0
  "$@" 2> >(
    local line at
    while IFS= read -r line; do
      now_us at
      printf '%d %s\n' $((at - t0)) "$line"
    done >&2
  ) || rc=$?
  # Wait for the reader (bash sets $! to it) so that its last line is
  # written; never for an older background job, such as the cluster.
  if [[ ${!:-} != "$before" ]]; then wait "$!" 2>/dev/null || true; fi
  return "$rc"
}

# median_run NAME prints the number of the run of NAME whose wall time is
# the median (the lower middle one of an even number of runs).
median_run() {
  local -a v
  read -r -a v <<<"${wall[$1]}"
  local i
  for i in "${!v[@]}"; do echo "$((i + 1)) ${v[i]}"; done | sort -n -k2 | sed -n "$(((${#v[@]} + 1) / 2))p" | cut -d' ' -f1
}

# breakdown NAME LABEL adds the progress lines that snapply printed to
# stderr (through stamp_stderr) in the median run of NAME, each with the
# time since the line before it (the time that line's step took: the first
# includes the process start) and since the start, and then the time from
# the last line to the exit.
breakdown() {
  local name=$1 label=$2 n line
  n=$(median_run "$name")
  local -a v
  read -r -a v <<<"${wall[$name]}"
  note "$label, run $n (the median, $(secs "${v[n - 1]}")s): each progress line after the time since the line before, its share of the wall and the time since the start"
  while IFS= read -r line; do note "$line"; done < <(awk -v wall="${v[n - 1]}" -v work="$work/" "$breakdown_awk" "$work/logs/$name.$n.stderr")
}

# breakdown_awk formats the lines of stamp_stderr for breakdown.
# shellcheck disable=SC2016 # an awk program
breakdown_awk='
function line(t, text) {
  printf "  %+8.3fs %5.1f%% %8.3fs  %s\n", (t - last) / 1000000, 100 * (t - last) / wall, t / 1000000, text
  last = t
}
{
  t = $1; sub(/^[0-9]+ /, "")
  while ((i = index($0, work)) > 0) $0 = substr($0, 1, i - 1) substr($0, i + length(work))
  line(t, $0)
}
END { line(wall, "(exit)") }'

# section_policy times `snapply plan` of the changed fixture without and
# with --policy examples/policies (the six example rules), alternating,
# each from a new store file, and reads from each policy run's progress
# the time the evaluation itself took ("policy: evaluated N objects in
# D"): its median, as a share of the median plan with policies, is the
# cost of the policies. The cluster is left as it was.
section_policy() {
  local changed=$work/changed store=$work/policy.db i d evals=""
  for ((i = 1; i <= runs; i++)); do
    rm -f "$store"
    measure plan-nopolicy 0 "$snapply" plan "$changed" --store "$store" -o json
    rm -f "$store"
    measure plan-policy 0 "$snapply" plan "$changed" --store "$store" -o json --policy "$root/examples/policies"
    d=$(sed -n 's/.*policy: evaluated [0-9]* objects in \([0-9.]*[a-zµ]*\):.*/\1/p' "$work/logs/plan-policy.$i.stderr")
    [[ -n $d ]] || die "plan --policy: no evaluation time in $work/logs/plan-policy.$i.stderr"
    evals+=" $(awk -v d="$d" 'BEGIN {
      if (d ~ /ms$/) { sub(/ms$/, "", d); printf "%d", d * 1000 }
      else if (d ~ /(µs|us)$/) { sub(/(µs|us)$/, "", d); printf "%d", d }
      else { sub(/s$/, "", d); printf "%d", d * 1000000 } }')"
  done
  row "snapply plan -o json" plan-nopolicy
  row "snapply plan -o json --policy (6 rules)" plan-policy
  local -A policy_eval=([eval]=$evals)
  local e p
  e=$(median policy_eval eval)
  p=$(median wall plan-policy)
  note "$(printf '%-40s %10s   %d.%02d%% of the plan with policies (target < 20%%)' "policy evaluation alone" "$(secs "$e")" $((e * 100 / p)) $((e * 10000 / p % 100)))"
}

# --- main ----------------------------------------------------------------

for s in "${sections[@]}"; do
  declare -F "section_$s" >/dev/null || die "unknown section $s (have: $(declare -F | sed -n 's/^declare -f section_//p' | tr '\n' ' '))"
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS: $runs: want a positive integer"

mkdir -p "$work/logs" "$work/bin"
build_bench
tools
# shellcheck disable=SC2119 # no arguments: a cluster without controllers
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
