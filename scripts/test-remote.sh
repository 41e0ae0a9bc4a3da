#!/usr/bin/env bash
# The MCP tests of sessions, files and transfer, and the browser, once more
# against a remote engine (scripts/remote-engine.sh: a second dockerd in a
# network namespace of its own), over TLS and over ssh. What that engine
# publishes is out of reach from here, so every call goes through the
# tunnel. The viewer and VNC through the tunnel, and the engine dropping
# mid-call, are host/tests/remote_engine.rs's (part of the workspace run).
# Arguments pass through to the test binaries (`-- --test-threads=2`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/remote-engine.sh up
env_lines=$(bash scripts/remote-engine.sh env)
tls=$(grep -v '^SSH_' <<<"$env_lines" | tr '\n' ' ')
ssh="DOCKER_HOST=$(sed -n 's/^SSH_DOCKER_HOST=//p' <<<"$env_lines")"
status=0
for way in tls ssh; do
    if [ "$way" = tls ]; then vars=$tls; else vars=$ssh; fi
    echo "test-remote: the MCP tests over $way ($vars)"
    # shellcheck disable=SC2086 # the variables are NAME=value words
    env -u DOCKER_HOST -u DOCKER_CONTEXT -u DOCKER_TLS_VERIFY -u DOCKER_CERT_PATH $vars \
        cargo test --locked -p computer-use-mcp --no-fail-fast \
        --test mcp_session --test mcp_transfer --test mcp_browser "$@" || status=1
done
exit $status
