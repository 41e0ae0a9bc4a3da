#!/usr/bin/env bash
# Builds the image and the host binary, starts the computer through the host's
# own MCP interface (start_computer, then the session ends when stdin closes;
# the computer keeps running), and prints the viewer link with `info`.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${COMPUTER_USE_EXTRA_CA:-}" ] && [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    export COMPUTER_USE_EXTRA_CA=/etc/ssl/certs/ca-certificates.crt
fi
bash scripts/build-image.sh
cargo build -p computer-use-mcp
bin=${CARGO_TARGET_DIR:-target}/debug/computer-use-mcp

# One MCP conversation over a pipe: initialize, then start_computer.
coproc MCP { COMPUTER_USE_OPEN=none "$bin"; }
send() { printf '%s\n' "$1" >&"${MCP[1]}"; }
read_reply() {
    local line
    while IFS= read -r -t 120 line <&"${MCP[0]}"; do
        case "$line" in *"\"id\":$1"*) printf '%s\n' "$line"; return 0 ;; esac
    done
    echo "up: no answer from computer-use-mcp" >&2
    return 1
}
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"up.sh","version":"1"}}}'
read_reply 1 >/dev/null
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
send '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"start_computer","arguments":{"title":"just up"}}}'
reply=$(read_reply 2)
exec {MCP[1]}>&-
wait "$MCP_PID" 2>/dev/null || true
case "$reply" in
    *'"isError":true'*) echo "up: start_computer failed: $reply" >&2; exit 1 ;;
esac
"$bin" info
