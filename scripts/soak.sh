#!/usr/bin/env bash
# Soak: 16 sessions at once in one computer through the real release host
# binary, each looping observe / act / shell / write_file / read_file (see
# host/examples/soak.rs). Prints calls made and failed (must be 0), p50/p99
# per tool, and the memory of the host, computerd and the container at the
# start and the end. Needs the computer-use-mcp:dev image
# (`bash scripts/build-image.sh`), or COMPUTER_USE_IMAGE.
#
# Usage: scripts/soak.sh [--seconds N] [--sessions N] [--browsers]   (default 600 s, 16)
# --browsers opens a Chromium on every screen first; the run then reports
# the processes and threads the container peaked at, which its pids limit
# (host/src/docker/limits.rs) is set from.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-docker.sh
cargo build --release -p computer-use-mcp --bin computer-use-mcp --example soak
"${CARGO_TARGET_DIR:-target}/release/examples/soak" "$@"
