#!/usr/bin/env bash
# End-to-end benchmark through MCP against the real container, beside
# `docker exec` baselines (see host/examples/mcp_bench/). Runs the image
# named by COMPUTER_USE_IMAGE, else builds computer-use-mcp:dev with a
# release computerd first (scripts/bench-image.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-docker.sh
[ -n "${COMPUTER_USE_IMAGE:-}" ] || bash scripts/bench-image.sh
cargo build --release -p computer-use-mcp --bin computer-use-mcp --example mcp_bench
"${CARGO_TARGET_DIR:-target}/release/examples/mcp_bench"
