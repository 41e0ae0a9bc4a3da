#!/usr/bin/env bash
# The MCP tests of sessions, transfer, the browser and a snapshot once more
# against a remote engine (scripts/remote-engine.sh: a second dockerd in a
# network namespace of its own), over TLS and over ssh. What that engine
# publishes is out of reach from here, so every call goes through the
# tunnel. The viewer and VNC through the tunnel, and the engine dropping
# mid-call, are host/tests/engine/remote_engine.rs's (part of the workspace
# pass). scripts/test.sh runs it after the workspace pass, beside the HTTP
# pass (scripts/test-http.sh), whose computers are on this machine's engine;
# it reruns the workspace pass's engine-tier binary one module at a time
# (scripts/engine-tests.sh), through scripts/test-runner.sh (each test's
# time).
#
# Usage: scripts/test-remote.sh [-- test harness options]
set -euo pipefail
cd "$(dirname "$0")/.."

# What runs over which transport. TLS and ssh differ only in how bytes
# reach the engine (a TLS socket, or the pipes of an `ssh` process running
# `docker system dial-stdio`); everything above that, the API calls and the
# exec tunnel to computerd, is the same code. So over both: the sessions
# (their ends within seconds of the client leaving ride on the tunnel's
# connections) and transfer (long streams, backpressure and cancelling
# through the pipes). The browser tests run over TLS only and the snapshot
# test (one long commit call) over ssh only: neither has a part that
# depends on the transport, and running them over both added 30 s and
# 15 s to a CI run. Snapshots: the one test that saves, wrecks, restores and resets;
# the template, tenant and command-line tests add nothing the engine's
# transport changes.
tls_modules=(mcp_session mcp_transfer mcp_browser)
ssh_modules=(mcp_session mcp_transfer snapshots::a_wrecked_computer_comes_back_from_its_snapshot)

[ "${1:-}" = "--" ] && shift

bash scripts/remote-engine.sh up
env_lines=$(bash scripts/remote-engine.sh env)
tls=$(grep -v '^SSH_' <<<"$env_lines" | tr '\n' ' ')
ssh="DOCKER_HOST=$(sed -n 's/^SSH_DOCKER_HOST=//p' <<<"$env_lines")"
# shellcheck source=scripts/engine-tests.sh
. scripts/engine-tests.sh
failed=()
for way in tls ssh; do
    if [ "$way" = tls ]; then
        vars=$tls
        modules=("${tls_modules[@]}")
    else
        vars=$ssh
        modules=("${ssh_modules[@]}")
    fi
    # One module at a time: side by side over one ssh tunnel, a transfer's
    # load slowed the session tests' own polling past their 3 s bound.
    for module in "${modules[@]}"; do
        echo "test-remote: $module over $way ($vars)"
        # A module's tests (`mcp_session::`), or one test named in full.
        if [[ $module == *::* ]]; then filter=$module; else filter="$module::"; fi
        # shellcheck disable=SC2086 # the variables are NAME=value words
        if ! (unset DOCKER_HOST DOCKER_CONTEXT DOCKER_TLS_VERIFY DOCKER_CERT_PATH \
            && export $vars && engine_tests "$filter" "$@"); then
            failed+=("$module over $way")
        fi
    done
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "test-remote: failed on the remote engine over: ${failed[*]}" >&2
    exit 1
fi
echo "test-remote: passed over TLS (${tls_modules[*]}) and ssh (${ssh_modules[*]})"
