#!/usr/bin/env bash
# The MCP tests again over Streamable HTTP: the same test binaries with
# COMPUTER_USE_TEST_TRANSPORT=http, so each one starts `computer-use-mcp serve
# --http 127.0.0.1:0` and drives it with rmcp's HTTP client instead of a
# stdio child. scripts/test.sh runs it after the workspace pass (stdio).
#
# Left out: mcp_http.rs and mcp_http_trust.rs, HTTP only and already in the
# workspace pass;
# faults_dockerd.rs, which restarts the Docker engine and tests no transport;
# release_build.rs, which checks the release binary's stdio start.
#
# Usage: scripts/test-http.sh [cargo test options] [-- test harness options]
set -euo pipefail
cd "$(dirname "$0")/.."

mcp_tests=(mcp_session mcp_open mcp_transfer mcp_browser mcp_devtools mcp_textview mcp_evidence mcp_handoff faults docker_hardening)
# `--workspace`, not `-p computer-use-mcp`: the same features as the workspace
# pass, so nothing is compiled again.
COMPUTER_USE_TEST_TRANSPORT=http exec cargo test --workspace "${mcp_tests[@]/#/--test=}" "$@"
