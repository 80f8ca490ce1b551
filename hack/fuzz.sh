#!/usr/bin/env bash
# Runs each Fuzz target of the packages given (default ./...) for FUZZTIME,
# minimizing new interesting inputs for at most FUZZMINIMIZETIME.
#
#   FUZZTIME=10s FUZZMINIMIZETIME=2s hack/fuzz.sh ./internal/store
#
# A real finding (a panic, a failed check, a hang) makes `go test -fuzz`
# write the failing input under the package's testdata/fuzz/<target>/ and
# fails the run. Go 1.26's fuzzing coordinator also fails a target that
# found nothing: when -fuzztime's deadline fires while a worker is still
# running an input, it reports a bare "context deadline exceeded" and
# writes no input (go.dev/issue/75804, fixed in Go 1.27). On a loaded
# 2-core machine that happens. Such a run, and only such a run, is
# retried, at most twice; anything else fails at once.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-2s}
pkgs=("$@")
[ "${#pkgs[@]}" -gt 0 ] || pkgs=(./...)

# The Fuzz targets, as "package target" lines: a test binary that only
# lists starts no API server.
targets=$("$GO" test -list '^Fuzz' "${pkgs[@]}" |
  awk '/^Fuzz/ { names[n++] = $1; next } /^ok/ { for (i = 0; i < n; i++) print $2, names[i]; n = 0 }')
if [ -z "$targets" ]; then
  echo "no Fuzz targets"
  exit 0
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# corpus lists the failing inputs go test has written for a target.
corpus() {
  local dir
  dir=$("$GO" list -f '{{.Dir}}' "$1")/testdata/fuzz/$2
  if [ -d "$dir" ]; then find "$dir" -type f | sort; fi
}

while read -r pkg target; do
  for attempt in 1 2 3; do
    echo "=== $pkg $target ($FUZZTIME)"
    before=$(corpus "$pkg" "$target")
    status=0
    "$GO" test -run '^$' -fuzz "^$target\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$pkg" </dev/null 2>&1 | tee "$log" || status=$?
    [ "$status" -eq 0 ] && break
    after=$(corpus "$pkg" "$target")
    # The coordinator race: the target's failure report is the bare
    # deadline and nothing else, and no failing input was written.
    report=$(sed -n "/^--- FAIL: $target /,/^FAIL\$/p" "$log" | sed '1d;$d')
    if [ "$before" = "$after" ] && [ "$(echo "$report" | xargs)" = "context deadline exceeded" ] &&
      [ "$attempt" -lt 3 ]; then
      echo "--- $target: \"context deadline exceeded\" with no failing input written: Go's fuzzing coordinator race at the -fuzztime deadline (go.dev/issue/75804); running it again"
      continue
    fi
    if [ "$before" != "$after" ]; then
      echo "--- $target: failing input written:" >&2
      comm -13 <(echo "$before") <(echo "$after") >&2
    fi
    exit "$status"
  done
done <<<"$targets"
