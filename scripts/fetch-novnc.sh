#!/usr/bin/env bash
# Puts noVNC into image/viewer/novnc/ (git-ignored) so that a computerd run
# from the work tree (tests, development) serves the same viewer as the
# image, which installs the same package in its Dockerfile. Checks the
# tarball against the pinned sha512; does nothing when it is already there.
#
# To bump noVNC: change the version and the sha512 here and in the
# Dockerfile (`npm pack @novnc/novnc@<version>` then `sha512sum` the file).
set -euo pipefail
cd "$(dirname "$0")/.."

version=1.7.0
sha512=b9c1093b1e13d9abc844295ea1d93b6286d98f93b619ad8078b7d0ebd03fca31bd1c76dadbe3c38304a437716db6b986fbbd191b1db5b0494d168b8ad77473c8
dest=image/viewer/novnc

if grep -qs "\"version\": \"$version\"" "$dest/package.json" && [ -f "$dest/core/rfb.js" ]; then
    exit 0
fi
command -v npm >/dev/null \
    || { echo "fetch-novnc: npm is not installed; run \`apt-get install npm\`" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@novnc/novnc@$version" >/dev/null)
tarball="$tmp/novnc-novnc-$version.tgz"
echo "$sha512  $tarball" | sha512sum -c --quiet - \
    || { echo "fetch-novnc: @novnc/novnc@$version does not match its pinned sha512" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest"
tar -xzf "$tarball" --strip-components=1 --no-same-owner -C "$dest"
echo "fetch-novnc: noVNC $version in $dest" >&2
