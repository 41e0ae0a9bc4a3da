#!/usr/bin/env bash
# The MCP tests again over Streamable HTTP: modules of the engine tier
# (host/tests/engine/) rerun with COMPUTER_USE_TEST_TRANSPORT=http, so each
# test starts `computer-use-mcp serve --http 127.0.0.1:0` and drives it with
# rmcp's HTTP client instead of a stdio child. scripts/test.sh runs it after
# the workspace pass (stdio).
#
# Left out: mcp_http and mcp_http_trust, HTTP only and already in the
# workspace pass; faults_dockerd, which restarts the Docker engine and tests
# no transport; release_build, which checks the release binary's stdio
# start; mcp_apps, about what the image opens for open_path and launch_app
# (the same calls as mcp_browser, which does run here); cli, doctor and
# typescript_sdk, which start no MCP client of their own or only a stdio one
# by design; docker_remote and remote_engine, about the Docker engine's
# transport and the tunnel, which scripts/test-remote.sh covers.
#
# The binary is the workspace pass's own (scripts/test-binaries.sh), run
# once with one filter per module (`mcp_session::`), so its tests fill both
# test threads across modules; it runs from its package's folder, as
# `cargo test` runs it.
#
# Usage: scripts/test-http.sh [-- test harness options]
set -euo pipefail
cd "$(dirname "$0")/.."

http_modules=(mcp_session mcp_open mcp_transfer mcp_browser mcp_devtools mcp_textview mcp_evidence mcp_handoff faults docker_hardening)

[ "${1:-}" = "--" ] && shift

engine=$(bash scripts/test-binaries.sh engine)
echo "test-http: ${http_modules[*]} over HTTP ($engine)"
if ! (cd host && COMPUTER_USE_TEST_TRANSPORT=http "$engine" "${http_modules[@]/%/::}" "$@"); then
    echo "test-http: failed over HTTP (the failures are listed above)" >&2
    exit 1
fi
echo "test-http: all ${#http_modules[@]} modules passed over HTTP"
