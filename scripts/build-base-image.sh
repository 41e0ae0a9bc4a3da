#!/usr/bin/env bash
# Make sure the image `debian:trixie` exists in the local Docker engine.
#
# The Dockerfile says `FROM debian:trixie` for everyone. Where a registry is
# reachable a short `docker pull` gets it; where none is (our dev machines and
# CI), the same image is built from Debian's mirror with debootstrap and
# `docker import`. Safe to re-run: does nothing when the image is present.
#
# Env:
#   BASE_IMAGE     image to provide (debian:trixie)
#   BASE_SUITE     Debian suite to bootstrap (trixie)
#   DEBIAN_MIRROR  mirror for debootstrap and the image's apt sources
#                  (http://deb.debian.org/debian)
#   PULL_TIMEOUT   seconds allowed for the pull attempt (20)
set -euo pipefail

image=${BASE_IMAGE:-debian:trixie}
suite=${BASE_SUITE:-trixie}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
pull_timeout=${PULL_TIMEOUT:-20}

say() { printf 'build-base-image: %s\n' "$*" >&2; }

if docker image inspect "$image" >/dev/null 2>&1; then
    exit 0
fi

# Short on purpose: with no registry reachable the pull either fails at once
# or hangs on the connection, and both must end quickly.
say "trying \`docker pull $image\` (${pull_timeout}s at most)"
if timeout "$pull_timeout" docker pull -q "$image" >/dev/null 2>&1; then
    say "pulled $image"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    say "cannot pull \`$image\` and debootstrap needs root; re-run as root"
    exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1; then
    say "installing debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

# Not under /tmp: a rootfs is a few hundred MB and /tmp may be a small tmpfs.
work=$(mktemp -d /var/tmp/debootstrap-"$suite".XXXXXX)
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs
log=$work/debootstrap.log

say "bootstrapping $suite from $mirror into $rootfs"
debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$log" 2>&1 || {
    say "debootstrap failed; last lines of its log:"
    tail -n 30 "$log" >&2
    exit 1
}

# Same apt sources as the official image: the suite, its updates and security.
security_mirror=${mirror%/debian}/debian-security
rm -f "$rootfs/etc/apt/sources.list"
cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security_mirror
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES

# As in the official image: no service starts during package installs, and
# dpkg skips fsync (a container layer needs none, and it makes big installs
# several times faster).
printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
echo force-unsafe-io >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"

# Leave no downloaded packages or package lists in the image.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*

say "importing as $image"
tar --numeric-owner -C "$rootfs" -c . \
    | docker import --change 'CMD ["bash"]' - "$image" >/dev/null
say "built $image ($(docker image inspect -f '{{.Size}}' "$image" | numfmt --to=iec))"
