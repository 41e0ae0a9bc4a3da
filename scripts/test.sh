#!/usr/bin/env bash
# The whole test suite: installs what the tests need (scripts/test-setup.sh),
# then runs every test of the workspace against those real parts.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/test-setup.sh
cargo test --workspace -- --test-threads="${TEST_THREADS:-2}"
