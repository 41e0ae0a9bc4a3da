#!/usr/bin/env bash
# Make sure a Docker engine answers on this machine.
#
# Installs Debian's `docker.io` when `dockerd` is missing, starts `dockerd` in
# the background when `docker info` fails, and waits for it with a deadline.
# Safe to re-run: does nothing when the engine already answers.
#
# Env:
#   DOCKERD_LOG      where a started dockerd writes its log (/var/log/dockerd.log)
#   DOCKERD_TIMEOUT  seconds to wait for the engine to answer (60)
set -euo pipefail

log=${DOCKERD_LOG:-/var/log/dockerd.log}
timeout=${DOCKERD_TIMEOUT:-60}

say() { printf 'ensure-docker: %s\n' "$*" >&2; }

# shellcheck source=scripts/pid-file.sh
. "$(dirname "$0")/pid-file.sh"

# Removes pid file $1 unless it names a live process called $2. After a
# crash, dockerd takes a file naming a zombie or a gone process for a running
# engine and refuses to start, or takes it for a running containerd and waits
# on a socket nobody serves until it gives up.
clear_stale_pid_file() {
    if [ -f "$1" ] && ! pid_file_runs "$1" "$2"; then
        say "removing the stale pid file $1"
        rm -f "$1"
    fi
}

if docker info >/dev/null 2>&1; then
    exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        say "\`dockerd\` is missing; install \`docker.io\` (sudo apt-get install docker.io) and re-run"
        exit 1
    fi
    say "installing docker.io"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi

# A docker.io install may have started the engine through its service already.
if ! docker info >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        say "the Docker engine does not answer and starting \`dockerd\` needs root"
        exit 1
    fi
    clear_stale_pid_file /var/run/docker.pid dockerd
    clear_stale_pid_file /var/run/docker/containerd/containerd.pid containerd
    say "starting dockerd (log: $log)"
    # setsid: the engine must outlive this script and the shell that ran it.
    setsid dockerd >"$log" 2>&1 </dev/null &
    started=$!
fi

deadline=$((SECONDS + timeout))
until docker info >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
        say "the Docker engine did not answer within ${timeout}s; last lines of $log:"
        tail -n 30 "$log" >&2 || true
        exit 1
    fi
    if [ -n "${started:-}" ] && ! process_live "$started"; then
        say "dockerd exited before it answered; last lines of $log:"
        tail -n 30 "$log" >&2 || true
        exit 1
    fi
    sleep 0.5
done
say "engine ready ($(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?'))"
