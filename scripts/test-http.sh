#!/usr/bin/env bash
# The MCP tests again over Streamable HTTP: modules of the engine tier
# (host/tests/engine/) rerun with COMPUTER_USE_TEST_TRANSPORT=http, so each
# test starts `computer-use-mcp serve --http 127.0.0.1:0` and drives it with
# rmcp's HTTP client instead of a stdio child. scripts/test.sh runs it after
# the workspace pass (stdio), beside the remote pass (scripts/test-remote.sh).
#
# Left out: mcp_http, mcp_http_trust and mcp_http_tenants, HTTP only and
# already in the workspace pass; mcp_browser, mcp_devtools, mcp_textview
# and mcp_open, whose tools (open_path, launch_app, shell,
# computer_observe's text view, the viewer opener, which decides in the
# host whatever the transport) answer through the same code, which the
# modules kept here cover over HTTP with the same kinds of answers (text,
# structured content, images, errors), while what HTTP changes (sessions
# per client, progress, cancelling, the end of a session with its client)
# is in mcp_session, mcp_transfer, mcp_handoff, faults and mcp_http. Of
# mcp_evidence_delivery, the two tests whose package is delivered as the
# session ends with its client or its server; its other tests (what is
# kept, a full recording) and mcp_evidence's (the recording and its
# review) no transport touches. Of docker_hardening, the proxy test (the
# server's own HTTP requests meet the proxy variables); its other tests
# look at the container, made by the same code over either transport.
# faults_dockerd, which
# restarts the Docker engine and tests no transport; release_build, which
# checks the release binary's stdio start; mcp_apps, about what the image
# opens for open_path and launch_app; cli, doctor and typescript_sdk, which
# start no MCP client of their own or only a stdio one by design;
# docker_remote and remote_engine, about the Docker engine's transport and
# the tunnel, which scripts/test-remote.sh covers.
#
# The binary is the workspace pass's own (`--workspace --test engine`
# resolves features as the workspace pass does, so cargo builds nothing
# again), run once with one filter per module (`mcp_session::`), so its
# tests fill the test threads across modules, through
# scripts/test-runner.sh (each test's time).
#
# Usage: scripts/test-http.sh [-- test harness options]
set -euo pipefail
cd "$(dirname "$0")/.."

http_modules=(mcp_session mcp_transfer mcp_handoff faults
    mcp_evidence_delivery::ending_the_session_delivers_the_package
    mcp_evidence_delivery::a_host_killed_mid_recording_still_gets_its_package
    docker_hardening::a_proxy_in_the_environment_sees_nothing_and_the_tools_still_work)

[ "${1:-}" = "--" ] && shift

# shellcheck source=scripts/engine-tests.sh
. scripts/engine-tests.sh
# A module's tests (`mcp_session::`), or one test named in full.
filters=()
for module in "${http_modules[@]}"; do
    if [[ $module == *::* ]]; then filters+=("$module"); else filters+=("$module::"); fi
done
echo "test-http: ${http_modules[*]} over HTTP"
if ! COMPUTER_USE_TEST_TRANSPORT=http engine_tests "${filters[@]}" "$@"; then
    echo "test-http: failed over HTTP (the failures are listed above)" >&2
    exit 1
fi
echo "test-http: passed over HTTP: ${http_modules[*]}"
