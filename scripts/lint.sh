#!/usr/bin/env bash
# The workspace's own lints, each with warnings as errors: rustfmt, the dev
# profile's list of build-time crates, clippy on every target, and rustdoc
# over private items (a module's `//!` map must link what it names). CI runs this inside scripts/release-check.sh;
# `just lint` runs it alone.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'lint: %s\n' "$*" >&2; }

say "cargo fmt --check"
cargo fmt --all -- --check
say "the crates that only run in the compiler are built unoptimized"
bash scripts/build-time-crates.sh
say "cargo clippy --workspace --all-targets"
cargo clippy --quiet --locked --workspace --all-targets -- -D warnings
say "cargo doc --document-private-items"
RUSTDOCFLAGS="-D warnings" cargo doc --quiet --locked --workspace --no-deps --document-private-items
say "clean"
