#!/usr/bin/env bash
# End-to-end benchmark through MCP against the real container, beside
# `docker exec` baselines (see host/examples/mcp_bench.rs). Needs the
# computer-use-mcp:dev image (`bash scripts/build-image.sh`), or the image
# named by COMPUTER_USE_IMAGE.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-docker.sh
cargo build --release -p computer-use-mcp --bin computer-use-mcp --example mcp_bench
"${CARGO_TARGET_DIR:-target}/release/examples/mcp_bench"
