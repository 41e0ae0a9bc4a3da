#!/usr/bin/env bash
# The MCP tests of sessions, files and transfer, and the browser, once more
# against a remote engine (scripts/remote-engine.sh: a second dockerd in a
# network namespace of its own), over TLS and over ssh. What that engine
# publishes is out of reach from here, so every call goes through the
# tunnel. The viewer and VNC through the tunnel, and the engine dropping
# mid-call, are host/tests/remote_engine.rs's (part of the workspace pass).
# scripts/test.sh runs it after the workspace pass, whose binaries these are
# (scripts/test-binaries.sh).
#
# Usage: scripts/test-remote.sh [-- test harness options]
set -euo pipefail
cd "$(dirname "$0")/.."

remote_tests=(mcp_session mcp_transfer mcp_browser)

[ "${1:-}" = "--" ] && shift

bash scripts/remote-engine.sh up
env_lines=$(bash scripts/remote-engine.sh env)
tls=$(grep -v '^SSH_' <<<"$env_lines" | tr '\n' ' ')
ssh="DOCKER_HOST=$(sed -n 's/^SSH_DOCKER_HOST=//p' <<<"$env_lines")"
mapfile -t binaries < <(bash scripts/test-binaries.sh "${remote_tests[@]}")
[ "${#binaries[@]}" -eq "${#remote_tests[@]}" ] || exit 1
failed=()
for way in tls ssh; do
    if [ "$way" = tls ]; then vars=$tls; else vars=$ssh; fi
    for i in "${!remote_tests[@]}"; do
        name=${remote_tests[$i]}
        echo "test-remote: $name over $way ($vars)"
        # shellcheck disable=SC2086 # the variables are NAME=value words
        if ! (cd host && env -u DOCKER_HOST -u DOCKER_CONTEXT -u DOCKER_TLS_VERIFY \
            -u DOCKER_CERT_PATH $vars "${binaries[$i]}" "$@"); then
            failed+=("$name over $way")
        fi
    done
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "test-remote: failed on the remote engine: ${failed[*]}" >&2
    exit 1
fi
echo "test-remote: all ${#remote_tests[@]} test binaries passed over TLS and ssh"
