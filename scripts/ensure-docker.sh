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
    say "starting dockerd (log: $log)"
    # setsid: the engine must outlive this script and the shell that ran it.
    setsid dockerd >"$log" 2>&1 </dev/null &
fi

deadline=$((SECONDS + timeout))
until docker info >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
        say "the Docker engine did not answer within ${timeout}s; last lines of $log:"
        tail -n 30 "$log" >&2 || true
        exit 1
    fi
    sleep 0.5
done
say "engine ready ($(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?'))"
