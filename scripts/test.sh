#!/usr/bin/env bash
# The whole test suite: installs what the tests need (scripts/test-setup.sh),
# runs the release checks (workflow lint, Windows and macOS builds, crate
# packages), builds the release host binary that host/tests/release_build.rs
# drives, then runs every test of the workspace against those real parts, and
# the MCP tests a second time over Streamable HTTP (scripts/test-http.sh) and
# a third time against a remote engine over TLS and ssh
# (scripts/test-remote.sh).
# Every test binary runs even when one fails, so one run names every failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/test-setup.sh --without-images
# The images build (mostly downloads and unpacking) and the remote engine
# loads them (about two minutes of disk) while the Rust builds below use
# the CPU; the tests start once both are done.
mkdir -p target
(bash scripts/test-setup.sh --images-only && bash scripts/remote-engine.sh up) \
    > target/images.log 2>&1 &
images=$!
bash scripts/release-check.sh
cargo build --release --locked -p computer-use-mcp
cargo test --workspace --locked --no-run
if ! wait "$images"; then
    cat target/images.log >&2
    echo "test: building the images or loading them into the remote engine failed (above)" >&2
    exit 1
fi
cargo test --workspace --no-fail-fast -- --test-threads="${TEST_THREADS:-2}"
bash scripts/test-http.sh -- --test-threads="${TEST_THREADS:-2}"
bash scripts/test-remote.sh -- --test-threads="${TEST_THREADS:-2}"
