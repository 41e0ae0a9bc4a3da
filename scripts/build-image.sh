#!/usr/bin/env bash
# Build the computer image (default tag computer-use-mcp:dev).
#
# Makes sure Docker and the base image exist, builds computerd in release
# mode, stages it and any extra CA under image/, runs `docker build`, and
# removes the staged CA afterwards. Safe to re-run; unchanged layers come
# from Docker's cache.
#
# Env:
#   COMPUTER_USE_IMAGE     tag to build (computer-use-mcp:dev)
#   COMPUTER_USE_EXTRA_CA  PEM file (one certificate or a bundle) to trust
#                          during the build and in the image; unset: none
#   COMPUTERD_BIN          a ready computerd binary (Linux, the image's
#                          architecture) to use instead of building one
#   CARGO_TARGET_DIR       honoured by the cargo build
#   DOCKER_BUILD_ARGS      extra words for `docker build` (e.g. --no-cache)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
image=${COMPUTER_USE_IMAGE:-computer-use-mcp:dev}
staged_bin=image/bin/computerd
ca_dir=image/extra-ca

say() { printf 'build-image: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# The image version is the workspace version: the host compares it with its
# own to decide when a stopped computer is recreated.
version=$(awk '
    /^\[/ { in_pkg = ($0 == "[workspace.package]") }
    in_pkg && /^version *=/ { gsub(/^version *= *"|".*$/, ""); print; exit }
' Cargo.toml)
[ -n "$version" ] || die "no \`version\` under [workspace.package] in Cargo.toml"

scripts/ensure-docker.sh
scripts/build-base-image.sh

# computerd: a given binary or a fresh release build.
if [ -n "${COMPUTERD_BIN:-}" ]; then
    bin=$COMPUTERD_BIN
    [ -f "$bin" ] || die "COMPUTERD_BIN=\`$bin\` is not a file"
else
    [ "$(uname -s)" = Linux ] \
        || die "computerd runs in a Linux container; build on Linux or set COMPUTERD_BIN to a Linux binary"
    say "building computerd (release)"
    cargo build --release -p computerd
    bin=${CARGO_TARGET_DIR:-$root/target}/release/computerd
fi
[ "$(head -c 4 "$bin" | od -An -c | tr -d ' ')" = '177ELF' ] \
    || die "\`$bin\` is not a Linux (ELF) binary"
mkdir -p image/bin
install -m 0755 "$bin" "$staged_bin"

# Extra CAs: one certificate per file, as update-ca-certificates expects.
# Removed again however the build ends, so they never linger in the tree.
cleanup() { rm -f "$ca_dir"/extra-*.crt; }
trap cleanup EXIT
cleanup
if [ -n "${COMPUTER_USE_EXTRA_CA:-}" ]; then
    [ -r "$COMPUTER_USE_EXTRA_CA" ] \
        || die "COMPUTER_USE_EXTRA_CA=\`$COMPUTER_USE_EXTRA_CA\` is not a readable file"
    count=$(awk -v dir="$ca_dir" '
        /-----BEGIN CERTIFICATE-----/ { n++; file = sprintf("%s/extra-%03d.crt", dir, n); inside = 1 }
        inside { print > file }
        /-----END CERTIFICATE-----/ { inside = 0; close(file) }
        END { print n + 0 }
    ' "$COMPUTER_USE_EXTRA_CA")
    [ "$count" -gt 0 ] || die "COMPUTER_USE_EXTRA_CA=\`$COMPUTER_USE_EXTRA_CA\` holds no PEM certificate"
    say "trusting $count extra CA certificate(s) from $COMPUTER_USE_EXTRA_CA"
fi

say "building $image (version $version)"
start=$SECONDS
# shellcheck disable=SC2086 # DOCKER_BUILD_ARGS is a list of words on purpose.
docker build -t "$image" --build-arg VERSION="$version" ${DOCKER_BUILD_ARGS:-} .
size=$(docker image inspect -f '{{.Size}}' "$image" | numfmt --to=iec)
say "built $image in $((SECONDS - start))s, $size"
# The image the tag named before, now untagged: its computerd layer alone
# is 90 MB, and a CI machine that keeps its engine gathered one per run.
docker image prune --force --filter label=computer-use.version >/dev/null
