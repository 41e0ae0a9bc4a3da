#!/usr/bin/env bash
# Prints the path of each named test binary of the workspace pass (a file
# `tests/NAME.rs` or a folder `tests/NAME/main.rs`), one per line, in the
# order given: `cargo test --workspace --tests --no-run` builds nothing
# new after that pass and names them. Asking cargo for just these tests
# (`--test=...`) would leave the other packages' dev-dependencies out of
# feature unification and recompile every crate. Fails naming a binary that
# cargo did not build.
#
# Usage: scripts/test-binaries.sh NAME...
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
listing=$(cargo test --workspace --tests --no-run 2>&1) || {
    printf '%s\n' "$listing" >&2
    exit 1
}
for name in "$@"; do
    exe=$(printf '%s\n' "$listing" \
        | sed -n "s#^ *Executable tests/$name\(\.rs\|/main\.rs\) (\(.*\))\$#\2#p" | head -n 1)
    if [ -z "$exe" ]; then
        echo "test-binaries: cargo built no test binary named $name" >&2
        exit 1
    fi
    case "$exe" in /*) ;; *) exe="$root/$exe" ;; esac
    printf '%s\n' "$exe"
done
