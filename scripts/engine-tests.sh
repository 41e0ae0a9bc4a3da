# Sourced by scripts/test-http.sh and scripts/test-remote.sh:
# `engine_tests FILTER... [harness options]` runs the host's engine-tier
# tests again, the binary the workspace pass built. `--workspace` makes
# cargo resolve features as that pass did, so it builds nothing again (it
# names the same executable); each test's time comes from
# scripts/test-runner.sh, cargo's runner for the tests.
CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=${CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER:-$PWD/scripts/test-runner.sh}
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER

engine_tests() {
    cargo test --locked --workspace --test engine -- "$@"
}
