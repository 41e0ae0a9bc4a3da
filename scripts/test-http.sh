#!/usr/bin/env bash
# The MCP tests again over Streamable HTTP: the same test binaries with
# COMPUTER_USE_TEST_TRANSPORT=http, so each one starts `computer-use-mcp serve
# --http 127.0.0.1:0` and drives it with rmcp's HTTP client instead of a
# stdio child. scripts/test.sh runs it after the workspace pass (stdio).
#
# Left out: mcp_http.rs and mcp_http_trust.rs, HTTP only and already in the
# workspace pass;
# faults_dockerd.rs, which restarts the Docker engine and tests no transport;
# release_build.rs, which checks the release binary's stdio start;
# mcp_apps.rs, about what the image opens for open_path and launch_app (the
# same calls as mcp_browser.rs, which does run here); cli.rs, doctor.rs and
# typescript_sdk.rs, which start no MCP client of their own or only a stdio
# one by design; docker_remote.rs and remote_engine.rs, about the Docker
# engine's transport and the tunnel, which scripts/test-remote.sh covers.
#
# The binaries are the workspace pass's own (scripts/test-binaries.sh).
# Each binary runs from its package's folder, as `cargo test` runs it; all
# run, and the script fails if any failed.
#
# Usage: scripts/test-http.sh [-- test harness options]
set -euo pipefail
cd "$(dirname "$0")/.."

mcp_tests=(mcp_session mcp_open mcp_transfer mcp_browser mcp_devtools mcp_textview mcp_evidence mcp_handoff faults docker_hardening)

[ "${1:-}" = "--" ] && shift

mapfile -t binaries < <(bash scripts/test-binaries.sh "${mcp_tests[@]}")
[ "${#binaries[@]}" -eq "${#mcp_tests[@]}" ] || exit 1
failed=()
for i in "${!mcp_tests[@]}"; do
    name=${mcp_tests[$i]}
    exe=${binaries[$i]}
    echo "test-http: $name over HTTP ($exe)"
    if ! (cd host && COMPUTER_USE_TEST_TRANSPORT=http "$exe" "$@"); then
        failed+=("$name")
    fi
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "test-http: failed over HTTP: ${failed[*]}" >&2
    exit 1
fi
echo "test-http: all ${#mcp_tests[@]} test binaries passed over HTTP"
