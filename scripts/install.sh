#!/usr/bin/env bash
# Installs the snapply binary for the GitHub Action, on the runner host.
#
#   SNAPPLY_REF          the action's ref (github.action_ref): a release tag
#                        like v1.2.3 installs that release's binary; any
#                        other ref (a branch, a SHA, empty for `uses: ./`)
#                        builds from SNAPPLY_ACTION_PATH with the runner's Go.
#   SNAPPLY_ACTION_PATH  the action's checkout (github.action_path)
#   SNAPPLY_RELEASE_URL  where releases are downloaded from (default
#                        https://github.com/snapply/snapply/releases/download);
#                        the asset is $URL/$REF/snapply_<os>_<arch>, its
#                        checksum in $URL/$REF/checksums.txt (sha256sum format)
#   RUNNER_TOOL_CACHE    the cache of a release binary ($TOOL_CACHE/snapply/<ref>/<os>_<arch>)
#   RUNNER_OS, RUNNER_ARCH  the runner's platform (Linux|macOS, X64|ARM64)
#   GITHUB_PATH          the directory of the binary is appended to it
#
# A release binary whose SHA-256 does not match the release's checksums
# file is refused: the step fails and nothing is installed.
set -euo pipefail

ref=${SNAPPLY_REF:-}
base=${SNAPPLY_RELEASE_URL:-https://github.com/snapply/snapply/releases/download}

die() { echo "snapply install: $*" >&2; exit 1; }

case "${RUNNER_OS:-$(uname -s)}" in
  Linux | linux) os=linux ;;
  macOS | Darwin | darwin) os=darwin ;;
  *) die "unsupported runner OS ${RUNNER_OS:-$(uname -s)}: snapply releases are built for Linux and macOS" ;;
esac
case "${RUNNER_ARCH:-$(uname -m)}" in
  X64 | x86_64 | amd64) arch=amd64 ;;
  ARM64 | arm64 | aarch64) arch=arm64 ;;
  *) die "unsupported runner architecture ${RUNNER_ARCH:-$(uname -m)}: snapply releases are built for amd64 and arm64" ;;
esac

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

# A release: vMAJOR.MINOR.PATCH, with an optional pre-release suffix.
if [[ $ref =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  dir="${RUNNER_TOOL_CACHE:-${TMPDIR:-/tmp}}/snapply/$ref/${os}_${arch}"
  if [ -x "$dir/snapply" ]; then
    echo "snapply $ref (${os}/${arch}) from the tool cache"
  else
    asset="snapply_${os}_${arch}"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    echo "downloading $base/$ref/$asset"
    curl -fsSL --retry 3 -o "$tmp/$asset" "$base/$ref/$asset" || die "cannot download $base/$ref/$asset"
    curl -fsSL --retry 3 -o "$tmp/checksums.txt" "$base/$ref/checksums.txt" || die "cannot download $base/$ref/checksums.txt"
    want=$(awk -v a="$asset" '$2 == a || $2 == "*" a { print $1 }' "$tmp/checksums.txt")
    [ -n "$want" ] || die "$asset is not listed in the checksums of release $ref"
    got=$(sha256 "$tmp/$asset")
    [ "$got" = "$want" ] || die "checksum mismatch for $asset of release $ref: got sha256 $got, the release lists $want; refusing to install it"
    mkdir -p "$dir"
    install -m 0755 "$tmp/$asset" "$dir/snapply"
    echo "installed snapply $ref (${os}/${arch}), sha256 $got"
  fi
else
  src=${SNAPPLY_ACTION_PATH:-}
  if [ -z "$src" ] || [ ! -f "$src/go.mod" ]; then die "ref ${ref:-(none)} is not a release, and SNAPPLY_ACTION_PATH (${src:-unset}) holds no source to build"; fi
  command -v go >/dev/null 2>&1 || die "ref ${ref:-(none)} is not a release: building from source needs Go (actions/setup-go)"
  dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/snapply-bin"
  mkdir -p "$dir"
  commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)
  echo "building snapply from $src (ref ${ref:-local}, commit $commit)"
  (cd "$src" && CGO_ENABLED=0 go build -trimpath \
    -ldflags "-X github.com/snapply/snapply/internal/version.Version=${ref:-dev} -X github.com/snapply/snapply/internal/version.Commit=$commit" \
    -o "$dir/snapply" ./cmd/snapply)
fi

if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$dir" >>"$GITHUB_PATH"
fi
echo "$dir/snapply"
