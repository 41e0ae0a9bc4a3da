#!/usr/bin/env bash
# A screenshot after a one-character change through MCP, beside the peer
# server computer-use-linux 0.7.36 on the same desktop (see
# host/examples/peer_bench.rs). Builds the peer from its crate's source
# into target/peer the first time, and the computer-use-mcp:dev image with
# a release computerd (scripts/bench-image.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-docker.sh
bash scripts/bench-image.sh
target_dir="${CARGO_TARGET_DIR:-target}"
peer="$target_dir/peer/bin/computer-use-linux"
if [ ! -x "$peer" ]; then
    cargo install computer-use-linux --version 0.7.36 --locked --root "$target_dir/peer"
fi
cargo build --release --locked -p computer-use-mcp --bin computer-use-mcp --example peer_bench
"$target_dir/release/examples/peer_bench" "$peer"
