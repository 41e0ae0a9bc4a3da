#!/usr/bin/env bash
# Benchmark harness: builds computerd in release mode and prints a table of
# medians beside their baselines (see computerd/examples/bench.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-deps.sh
cargo build --release --locked -p computerd --bin computerd --example bench
target_dir="${CARGO_TARGET_DIR:-target}"
"$target_dir/release/examples/bench"
