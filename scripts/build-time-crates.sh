#!/usr/bin/env bash
# Fails naming each crate that only runs inside the compiler (a procedural
# macro, a build script's dependency, or what either is built from) and that
# Cargo.toml's `[profile.dev.package]` does not build at opt-level 0: the
# `"*"` line that optimizes every dependency would otherwise optimize it too,
# which costs minutes of every clean build and gains nothing at run time.
set -euo pipefail
cd "$(dirname "$0")/.."

crates() {
    cargo tree --workspace --locked --target x86_64-unknown-linux-gnu --prefix none \
        --format '{p}' "$@" | awk '{print $1}' | sort -u
}
# One after the other: side by side they wait on each other's cache lock.
at_run_time=$(crates -e normal,dev,no-proc-macro)
all=$(crates -e all)
[ -n "$all" ] || { echo "build-time-crates: cargo tree listed no crate" >&2; exit 1; }
build_time=$(comm -13 <(printf '%s\n' "$at_run_time") <(printf '%s\n' "$all"))
missing=()
for crate in $build_time; do
    grep -qx "$crate = { opt-level = 0 }" Cargo.toml || missing+=("$crate")
done
if [ "${#missing[@]}" -gt 0 ]; then
    for crate in "${missing[@]}"; do
        echo "build-time-crates: add \`$crate = { opt-level = 0 }\` under [profile.dev.package] in Cargo.toml" >&2
    done
    exit 1
fi
