#!/usr/bin/env bash
# Removes what earlier runs of the test suite left in the Docker engines of
# this machine: a run that was killed (a CI time limit, Ctrl-C) never ran
# its tests' clean-up. On a machine that keeps its engine between runs, as
# CI machines may, each run's leftovers stayed on its disk for the next: one
# CI run failed with "no space left on device".
#
# Only what the suite itself makes goes, by name or label, never a user's
# computer:
#  - containers and volumes named `cu-test-*` (host/tests/support/docker.rs
#    names every test computer so; its network guard and snapshot copies
#    carry the same prefix);
#  - snapshot images tagged `computer-use-snapshot:cu-test-*`.
# The computer images a rebuild or a reload left untagged are pruned where
# that happens (scripts/build-image.sh, scripts/remote-engine.sh), once
# the containers here that used them are gone.
# The local engine always; the remote-engine tests' engine
# (scripts/remote-engine.sh) when it runs.
#
# Run by scripts/test-setup.sh before anything is built; safe to re-run.
set -euo pipefail

say() { echo "sweep-test-leftovers: $*" >&2; }

sweep() {
    local where=$1
    shift
    local containers volumes snapshots
    containers=$(docker "$@" ps -aq --filter 'name=^/cu-test-')
    if [ -n "$containers" ]; then
        say "$where: removing $(wc -w <<<"$containers") test container(s)"
        # shellcheck disable=SC2086 # one word per id
        docker "$@" rm -f -v $containers >/dev/null
    fi
    volumes=$(docker "$@" volume ls -q | grep '^cu-test-' || true)
    if [ -n "$volumes" ]; then
        say "$where: removing $(wc -w <<<"$volumes") test volume(s)"
        # shellcheck disable=SC2086
        docker "$@" volume rm -f $volumes >/dev/null
    fi
    snapshots=$(docker "$@" images --format '{{.Repository}}:{{.Tag}}' \
        | grep '^computer-use-snapshot:cu-test-' || true)
    if [ -n "$snapshots" ]; then
        say "$where: removing $(wc -w <<<"$snapshots") test snapshot image(s)"
        # shellcheck disable=SC2086
        docker "$@" rmi -f $snapshots >/dev/null
    fi
}

sweep "this machine's engine"
remote_sock=${COMPUTER_USE_REMOTE_STATE:-/var/tmp/computer-use-remote}/docker.sock
if [ -S "$remote_sock" ] && docker -H "unix://$remote_sock" version >/dev/null 2>&1; then
    sweep "the remote engine" -H "unix://$remote_sock"
fi
