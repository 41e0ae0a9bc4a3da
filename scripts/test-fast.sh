#!/usr/bin/env bash
# The fast loop: every test that needs neither Docker nor an X server.
# The protocol crate whole (wire types, limits, the archive rules against
# real files), the unit tests of computerd and of the host, and the local
# test tiers of both: computerd's settings as its binary reads them, its
# files and shell modules and the files under `image/`; the host's command
# line, and the host against a stub computer that lies. About half a minute
# once built; the whole suite (scripts/test.sh) stays what CI runs.
#
# The engine is pointed at a socket that does not exist and DISPLAY is
# unset, so a test that reached for either would fail, not pass quietly.
# With --prove (root only), Xvnc is also replaced by `false` for the run,
# in a mount namespace of its own: scripts/test.sh uses it to keep the loop
# honest.
#
# Usage: scripts/test-fast.sh [--prove] [-- test harness options]
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--prove" ]; then
    shift
    xvnc=$(readlink -f "$(command -v Xvnc)") || {
        echo "test-fast: --prove masks Xvnc, which is not installed: apt-get install tigervnc-standalone-server" >&2
        exit 1
    }
    exec unshare --mount -- bash -c 'mount --bind /bin/false "$1" && shift && exec bash "$0" "$@"' \
        "$0" "$xvnc" "$@"
fi
[ "${1:-}" = "--" ] && shift

export DOCKER_HOST=unix:///nonexistent/test-fast-has-no-docker.sock
unset DISPLAY DOCKER_CONTEXT
# One cargo call over the workspace, so features resolve as for the whole
# suite and its build is reused: each crate's unit tests and the local tier
# of each crate (`--test local` names all three): the protocol's archive
# engine and wire fixtures, computerd's settings as the binary reads them,
# files, shell and the files under `image/`, and the host's. test-support
# has no tests of its own (its checks are in protocol's local tier), and
# `--lib` would name it anyway.
cargo test --locked --workspace --exclude test-support --lib --test local -- "$@"
echo "test-fast: passed without Docker or X"
