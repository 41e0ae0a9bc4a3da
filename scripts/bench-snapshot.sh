#!/usr/bin/env bash
# Snapshot benchmark (issue 42's speed rows): save_snapshot (wall and
# paused time) beside docker commit + a home volume copy in the same run,
# restore_snapshot to its first and to a drawn frame, reset_computer, and
# four computers forked at once from a snapshot (COMPUTER_USE_TEMPLATE), on
# a busy computer of its own (see host/examples/snapshot_bench.rs).
# Builds the computer-use-mcp:dev image with a release computerd first
# (scripts/bench-image.sh). Options pass through: --runs N (3), --image TAG.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-docker.sh
bash scripts/bench-image.sh
cargo build --release --locked -p computer-use-mcp --bin computer-use-mcp --example snapshot_bench
target_dir="${CARGO_TARGET_DIR:-target}"
"$target_dir/release/examples/snapshot_bench" "$@"
