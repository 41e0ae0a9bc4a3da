#!/usr/bin/env bash
# Runs one test binary with libtest's time per test (`... ok <1.234s>`), so
# that a run's log holds what scripts/test-times.sh tables. scripts/test.sh
# makes it cargo's runner for the tests (CARGO_TARGET_<triple>_RUNNER), and
# scripts/test-http.sh and scripts/test-remote.sh run the engine tier
# through it.
#
# `--report-time` is unstable; RUSTC_BOOTSTRAP=1, set here for the test
# process alone, lets the stable libtest take it. Setting it for cargo
# instead would change every crate's fingerprint and rebuild the workspace.
#
# Usage: scripts/test-runner.sh TEST_BINARY [test harness options]
set -euo pipefail
binary=$1
shift
exec env RUSTC_BOOTSTRAP=1 "$binary" "$@" -Z unstable-options --report-time
