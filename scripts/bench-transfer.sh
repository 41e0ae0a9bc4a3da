#!/usr/bin/env bash
# file_transfer benchmark: 1 GiB as one file and as 20 000 files, to and
# from the computer, beside `docker cp` in the same run, with the host's
# peak RSS (see host/examples/transfer_bench.rs). Builds the
# computer-use-mcp:dev image with a release computerd first
# (scripts/bench-image.sh). Options pass through: --runs N, --dir PATH, --keep-data,
# --image TAG.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-docker.sh
bash scripts/bench-image.sh
cargo build --release --locked -p computer-use-mcp --bin computer-use-mcp --example transfer_bench
target_dir="${CARGO_TARGET_DIR:-target}"
"$target_dir/release/examples/transfer_bench" "$@"
