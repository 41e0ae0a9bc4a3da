# Recipes for working on computer-use-mcp. `just` lists them.

default:
    @just --list

# Format check, clippy with warnings as errors, and the whole test suite.
check:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets --locked -- -D warnings
    bash scripts/test.sh

# The whole test suite (what CI runs).
test:
    bash scripts/test.sh

# Medians of capture, input and shell against their baselines.
bench:
    bash scripts/bench.sh
