#!/usr/bin/env bash
# Versions for releases.
#
#   release-version.sh check-prerelease VERSION
#       VERSION is semver with a pre-release part (0.2.0-beta.1), as
#       `just tag-prerelease` requires.
#   release-version.sh tag-prerelease VERSION
#       Checks VERSION as above, tags the last commit vVERSION and pushes the
#       tag to origin, which starts the release workflow.
#   release-version.sh stamp TAG
#       For the tag workflow: TAG is vVERSION. A release tag must match the
#       workspace version (release-plz bumped it); a pre-release tag writes
#       its version into Cargo.toml, so the binaries report it and pull the
#       image of that version, and the image carries it as its label.
#       Prints `version=...` and `prerelease=true|false`, also to
#       $GITHUB_OUTPUT when that is set.
#
# MANIFEST points at another workspace Cargo.toml (the checks use a copy).
set -euo pipefail

manifest=${MANIFEST:-$(cd "$(dirname "$0")/.." && pwd)/Cargo.toml}

die() { printf 'release-version: %s\n' "$*" >&2; exit 1; }

# Semantic Versioning 2.0.0: MAJOR.MINOR.PATCH[-PRE][+BUILD], no leading zeros.
num='(0|[1-9][0-9]*)'
ident='(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)'
semver="^$num\\.$num\\.$num(-$ident(\\.$ident)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?\$"

is_semver() { [[ $1 =~ $semver ]]; }
is_prerelease() { is_semver "$1" && [[ ${1%%+*} == *-* ]]; }

workspace_version() {
    awk '
        /^\[/ { in_pkg = ($0 == "[workspace.package]") }
        in_pkg && /^version *=/ { gsub(/^version *= *"|".*$/, ""); print; exit }
    ' "$manifest"
}

# Rewrites the workspace version and the version of the path dependency on
# computer-protocol, which `cargo package` needs to match.
stamp() {
    local from=$1 to=$2 tmp
    tmp=$(mktemp)
    awk -v from="$from" -v to="$to" '
        /^\[/ { section = $0 }
        section == "[workspace.package]" && /^version *= *"/ { sub("\"" from "\"", "\"" to "\"") }
        section == "[workspace.dependencies]" && /^computer-protocol *=/ { sub("version = \"" from "\"", "version = \"" to "\"") }
        { print }
    ' "$manifest" >"$tmp"
    cat "$tmp" >"$manifest"
    rm -f "$tmp"
    [ "$(workspace_version)" = "$to" ] || die "could not write version $to into $manifest"
    grep -q "^computer-protocol = .*version = \"$to\"" "$manifest" \
        || die "could not write version $to into the computer-protocol dependency in $manifest"
}

output() {
    printf '%s\n' "$@"
    if [ -n "${GITHUB_OUTPUT:-}" ]; then printf '%s\n' "$@" >>"$GITHUB_OUTPUT"; fi
}

check_prerelease() {
    is_semver "$1" \
        || die "\`$1\` is not a semantic version; write it as MAJOR.MINOR.PATCH-PRE, for example 0.2.0-beta.1 (no leading v)"
    is_prerelease "$1" \
        || die "\`$1\` has no pre-release part; pre-releases look like 0.2.0-beta.1, and releases come from release-plz's PR (RELEASE.md)"
}

case "${1:-}" in
check-prerelease)
    [ $# -eq 2 ] || die "usage: release-version.sh check-prerelease VERSION"
    check_prerelease "$2"
    ;;
tag-prerelease)
    [ $# -eq 2 ] || die "usage: release-version.sh tag-prerelease VERSION"
    version=$2
    check_prerelease "$version"
    ! git rev-parse -q --verify "refs/tags/v$version" >/dev/null \
        || die "tag v$version exists already; pick the next pre-release number"
    [ -z "$(git status --porcelain --untracked-files=no)" ] \
        || die "the work tree has uncommitted changes; commit them first, as the tag names the last commit"
    git tag -a "v$version" -m "computer-use-mcp $version"
    git push origin "v$version"
    printf 'pushed v%s: the release workflow builds it and publishes a pre-release\n' "$version"
    ;;
stamp)
    [ $# -eq 2 ] || die "usage: release-version.sh stamp TAG"
    tag=$2
    [[ $tag == v* ]] || die "tag \`$tag\` does not start with v; release tags are vMAJOR.MINOR.PATCH[-PRE]"
    version=${tag#v}
    is_semver "$version" || die "tag \`$tag\` is not v followed by a semantic version"
    current=$(workspace_version)
    [ -n "$current" ] || die "no \`version\` under [workspace.package] in $manifest"
    if is_prerelease "$version"; then
        [ "$version" = "$current" ] || stamp "$current" "$version"
        output "version=$version" "prerelease=true"
    else
        [ "$version" = "$current" ] \
            || die "tag \`$tag\` names a release, but the workspace version is $current; releases are tagged by release-plz when its PR is merged (RELEASE.md)"
        output "version=$version" "prerelease=false"
    fi
    ;;
*)
    die "usage: release-version.sh check-prerelease VERSION | tag-prerelease VERSION | stamp TAG"
    ;;
esac
