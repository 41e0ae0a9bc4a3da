#!/usr/bin/env bash
# The MCP tests again over Streamable HTTP: modules of the engine tier
# (host/tests/engine/) rerun with COMPUTER_USE_TEST_TRANSPORT=http, so each
# test starts `computer-use-mcp serve --http 127.0.0.1:0` and drives it with
# rmcp's HTTP client instead of a stdio child. scripts/test.sh runs it after
# the workspace pass (stdio).
#
# Left out: mcp_http and mcp_http_trust, HTTP only and already in the
# workspace pass; mcp_browser, mcp_devtools and mcp_textview, whose tools
# (open_path, launch_app, shell, computer_observe's text view) answer
# through the same code whatever the transport, which the modules kept here
# cover over HTTP with the same kinds of answers (text, structured content,
# images, errors), while what HTTP changes (sessions per client, progress,
# cancelling, the end of a session with its client) is in mcp_session,
# mcp_transfer, mcp_handoff, faults and mcp_http; faults_dockerd, which
# restarts the Docker engine and tests no transport; release_build, which
# checks the release binary's stdio start; mcp_apps, about what the image
# opens for open_path and launch_app; cli, doctor and typescript_sdk, which
# start no MCP client of their own or only a stdio one by design;
# docker_remote and remote_engine, about the Docker engine's transport and
# the tunnel, which scripts/test-remote.sh covers.
#
# The binary is the workspace pass's own (scripts/test-binaries.sh), run
# once with one filter per module (`mcp_session::`), so its tests fill both
# test threads across modules, through scripts/test-runner.sh (each test's
# time); it runs from its package's folder, as `cargo test` runs it.
#
# Usage: scripts/test-http.sh [-- test harness options]
set -euo pipefail
cd "$(dirname "$0")/.."

http_modules=(mcp_session mcp_open mcp_transfer mcp_evidence mcp_handoff faults docker_hardening)

[ "${1:-}" = "--" ] && shift

engine=$(bash scripts/test-binaries.sh engine)
echo "test-http: ${http_modules[*]} over HTTP ($engine)"
if ! (cd host && COMPUTER_USE_TEST_TRANSPORT=http bash ../scripts/test-runner.sh "$engine" "${http_modules[@]/%/::}" "$@"); then
    echo "test-http: failed over HTTP (the failures are listed above)" >&2
    exit 1
fi
echo "test-http: all ${#http_modules[@]} modules passed over HTTP"
