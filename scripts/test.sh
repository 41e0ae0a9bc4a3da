#!/usr/bin/env bash
# The whole test suite: installs what the tests need on a Debian or Ubuntu
# machine, then runs every test of the workspace against real parts.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-test-deps.sh
cargo test --workspace --locked -- --test-threads="${TEST_THREADS:-2}"
