# Recipes for working on computer-use-mcp. `just` lists them.

# On Windows, recipes run under Git Bash (Git for Windows puts `bash` on PATH),
# so the same bash lines work on every platform.
set windows-shell := ["bash", "-cu"]

default:
    @just --list

# Build the image and the host binary, start the computer, print the viewer link.
up:
    bash scripts/up.sh

# Everything CI runs: the whole test suite, the import-circle check, the lints and the release checks.
check:
    bash scripts/test.sh

# rustfmt, clippy and rustdoc (private items), each with warnings as errors.
lint:
    bash scripts/lint.sh

# The tests that need neither Docker nor X: protocol, computerd's and the host's unit tests (about 20 s warm).
test-fast:
    bash scripts/test-fast.sh

# The whole test suite (what CI runs).
test:
    bash scripts/test.sh

# Fail on an import circle between the workspace's modules or files.
circles:
    python3 scripts/import-circles.py

# Build the computer-use-mcp:dev image.
image:
    bash scripts/build-image.sh

# Build the image, check every tool in it runs, and call computerd's health endpoint.
image-check:
    bash scripts/build-image.sh
    CHECK_HEALTH=1 bash scripts/image-check.sh

# Run the host binary's info command.
info:
    cargo run -q -p computer-use-mcp -- info

# Medians of capture, input and shell against their baselines.
bench:
    bash scripts/bench.sh

# file_transfer of 1 GiB (one file, 20 000 files) both ways beside docker cp, with host RSS.
bench-transfer:
    bash scripts/bench-transfer.sh

# A screenshot after a one-character change, beside computer-use-linux 0.7.36 on the same screen.
bench-peer:
    bash scripts/bench-peer.sh

# save_snapshot, restore, reset and 4 forks on a busy computer, beside docker commit + a volume copy.
bench-snapshot *ARGS:
    bash scripts/bench-snapshot.sh {{ARGS}}

# The whole suite N times from one build, with passes and failures per test.
repeat-tests N="5":
    bash scripts/repeat-tests.sh {{N}}

# 16 sessions looping every tool for 10 minutes (`just soak --seconds 60`): failures, p50/p99, memory.
soak *ARGS:
    bash scripts/soak.sh {{ARGS}}

# Release checks CI runs: actionlint and zizmor, Windows/macOS checks, cargo package.
release-check:
    bash scripts/release-check.sh

# Tag a pre-release from this commit and push the tag: `just tag-prerelease 0.2.0-beta.1`.
[positional-arguments]
tag-prerelease VERSION:
    bash scripts/release-version.sh tag-prerelease "$1"
