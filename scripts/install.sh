#!/usr/bin/env bash
# Installs the snapply binary for the GitHub Action, on the runner host.
#
#   install.sh           install snapply and put it on the PATH
#   install.sh resolve   only say what `install.sh` will do: writes tag=
#                        (the release to install, empty to build) and
#                        build=true|false to GITHUB_OUTPUT, so that the
#                        action sets up Go only when it builds
#
#   SNAPPLY_REF          the action's ref (github.action_ref):
#                        - a release tag like v1.2.3 installs that release;
#                        - a major (v1) or minor (v1.4) tag installs the
#                          newest published release it covers (v1.x.y, or
#                          v1.4.y; no pre-release, no draft), found with
#                          the releases API of SNAPPLY_REPOSITORY; when no
#                          release covers it, or the API cannot be read,
#                          it builds from source, with a notice saying why;
#                        - any other ref (a branch, a SHA, empty for
#                          `uses: ./`) builds from SNAPPLY_ACTION_PATH with
#                          the runner's Go.
#   SNAPPLY_TAG, SNAPPLY_BUILD  what `install.sh resolve` decided (the
#                        action passes its outputs); when SNAPPLY_BUILD is
#                        set, no new decision is made
#   SNAPPLY_REPOSITORY   the action's repository (github.action_repository,
#                        default snapply/snapply)
#   GITHUB_API_URL       the REST API (default https://api.github.com)
#   GITHUB_TOKEN         sent to the releases API when set (rate limit)
#   SNAPPLY_RELEASE_URL  where releases are downloaded from (default
#                        $GITHUB_SERVER_URL/$SNAPPLY_REPOSITORY/releases/download,
#                        GITHUB_SERVER_URL defaulting to https://github.com);
#                        the asset is $URL/$TAG/snapply_<os>_<arch>, its
#                        checksum in $URL/$TAG/checksums.txt (sha256sum format)
#   SNAPPLY_ACTION_PATH  the action's checkout (github.action_path)
#   RUNNER_TOOL_CACHE    the cache of a release binary ($TOOL_CACHE/snapply/<tag>/<os>_<arch>)
#   RUNNER_OS, RUNNER_ARCH  the runner's platform (Linux|macOS, X64|ARM64)
#   GITHUB_PATH          the directory of the binary is appended to it
#
# A release binary whose SHA-256 does not match the release's checksums
# file is refused: the step fails and nothing is installed.
set -euo pipefail

ref=${SNAPPLY_REF:-}
repo=${SNAPPLY_REPOSITORY:-}
[ -n "$repo" ] || repo=snapply/snapply
api=${GITHUB_API_URL:-https://api.github.com}
base=${SNAPPLY_RELEASE_URL:-${GITHUB_SERVER_URL:-https://github.com}/$repo/releases/download}

die() { echo "snapply install: $*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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

# releases prints "TAG DRAFT PRERELEASE" for each release in the JSON
# array of the releases API on stdin. Each release object holds each of
# these keys once (its nested author and assets hold none); a key inside a
# string, such as the release notes, is escaped and does not match.
releases() {
  tr -d '\n\r' | { grep -oE '"(tag_name|draft|prerelease)"[[:space:]]*:[[:space:]]*("[^"]*"|true|false)' || true; } |
    awk '{
      key = $0; sub(/^"/, "", key); sub(/".*/, "", key)
      val = $0; sub(/^"[a-z_]*"[[:space:]]*:[[:space:]]*/, "", val); gsub(/"/, "", val)
      r[key] = val; n[key] = 1
      if (n["tag_name"] && n["draft"] && n["prerelease"]) {
        print r["tag_name"], r["draft"], r["prerelease"]
        delete n
      }
    }'
}

# newest prints the newest published release vX.Y.Z covered by the major
# or minor tag $1 (v1 covers v1.*.*, v1.4 covers v1.4.*), or nothing when
# none does. It fails when the releases API cannot be read; $tmp/api-error
# then says why.
newest() {
  local want page=1 count curlrc=/dev/null
  want="^${1//./[.]}[.][0-9]+"
  [[ $1 == *.* ]] || want="$want[.][0-9]+"
  want="$want\$"
  if [ -n "${GITHUB_TOKEN:-}" ]; then
    # The token goes to curl in a config file, not on its command line.
    curlrc="$tmp/curlrc"
    (umask 077 && printf 'header = "Authorization: Bearer %s"\n' "$GITHUB_TOKEN" >"$curlrc")
  fi
  : >"$tmp/tags"
  while [ "$page" -le 10 ]; do
    curl -fsS --retry 2 -K "$curlrc" -H "Accept: application/vnd.github+json" -o "$tmp/releases.json" \
      "$api/repos/$repo/releases?per_page=100&page=$page" 2>"$tmp/api-error" || return 1
    releases <"$tmp/releases.json" >"$tmp/page"
    awk -v re="$want" '$2 == "false" && $3 == "false" && $1 ~ re { print $1 }' "$tmp/page" >>"$tmp/tags"
    count=$(wc -l <"$tmp/page")
    [ "$count" -ge 100 ] || break
    page=$((page + 1))
  done
  sed 's/^v//' "$tmp/tags" | sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1 | sed 's/^./v&/'
}

# decide sets tag (the release to install; empty: build from source) and
# says why it builds when it does.
decide() {
  tag=
  if [ -n "${SNAPPLY_BUILD:-}" ]; then
    tag=${SNAPPLY_TAG:-}
    [ "$SNAPPLY_BUILD" = true ] && tag=
    return 0
  fi
  if [[ $ref =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
    tag=$ref
  elif [[ $ref =~ ^v[0-9]+(\.[0-9]+)?$ ]]; then
    if ! tag=$(newest "$ref"); then
      tag=
      echo "::notice title=snapply install::cannot list the releases of $repo ($(tr -d '\n' <"$tmp/api-error")): building snapply $ref from source instead"
    elif [ -z "$tag" ]; then
      echo "::notice title=snapply install::no published release of $repo matches $ref: building snapply $ref from source instead"
    else
      echo "snapply $ref is release $tag, the newest it covers"
    fi
  fi
}

decide
if [ "${1:-}" = resolve ]; then
  build=false
  [ -n "$tag" ] || build=true
  echo "tag=$tag build=$build"
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf 'tag=%s\nbuild=%s\n' "$tag" "$build" >>"$GITHUB_OUTPUT"
  fi
  exit 0
fi

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

if [ -n "$tag" ]; then
  dir="${RUNNER_TOOL_CACHE:-${TMPDIR:-/tmp}}/snapply/$tag/${os}_${arch}"
  if [ -x "$dir/snapply" ]; then
    echo "snapply $tag (${os}/${arch}) from the tool cache"
  else
    asset="snapply_${os}_${arch}"
    echo "downloading $base/$tag/$asset"
    curl -fsSL --retry 3 -o "$tmp/$asset" "$base/$tag/$asset" || die "cannot download $base/$tag/$asset"
    curl -fsSL --retry 3 -o "$tmp/checksums.txt" "$base/$tag/checksums.txt" || die "cannot download $base/$tag/checksums.txt"
    want=$(awk -v a="$asset" '$2 == a || $2 == "*" a { print $1 }' "$tmp/checksums.txt")
    [ -n "$want" ] || die "$asset is not listed in the checksums of release $tag"
    got=$(sha256 "$tmp/$asset")
    [ "$got" = "$want" ] || die "checksum mismatch for $asset of release $tag: got sha256 $got, the release lists $want; refusing to install it"
    mkdir -p "$dir"
    install -m 0755 "$tmp/$asset" "$dir/snapply"
    echo "installed snapply $tag (${os}/${arch}), sha256 $got"
  fi
else
  src=${SNAPPLY_ACTION_PATH:-}
  if [ -z "$src" ] || [ ! -f "$src/go.mod" ]; then die "ref ${ref:-(none)} is not a published release, and SNAPPLY_ACTION_PATH (${src:-unset}) holds no source to build"; fi
  command -v go >/dev/null 2>&1 || die "ref ${ref:-(none)} is not a published release: building from source needs Go (actions/setup-go)"
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
