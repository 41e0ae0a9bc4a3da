#!/usr/bin/env bash
# The whole test suite: installs what the tests need (scripts/test-setup.sh),
# builds the computerd the image holds and the host binary that
# host/tests/engine/release_build.rs drives,
# then runs every test of the workspace against those real parts, then, side
# by side, the MCP tests a second time over Streamable HTTP
# (scripts/test-http.sh) and a third time against a remote engine over TLS
# and ssh (scripts/test-remote.sh).
# The release checks (workflow lint, Windows and macOS builds, crate
# packages) run beside the tests.
#
# Every test binary and every pass runs even when one fails, so one run
# names every failure; the exit status is non-zero if anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
# Each phase says the free disk too: a run needs about 8 GB (the target
# folder, the computer image, the containers), and a full disk fails far
# from its cause.
phase() {
    printf 'test: %s (at %dm%02ds, %s free on disk)\n' "$1" $(((SECONDS - started) / 60)) \
        $(((SECONDS - started) % 60)) "$(df -h --output=avail . | tail -n 1 | tr -d ' ')" >&2
}

bash scripts/test-setup.sh --without-images
phase "setup done"
# mold links the suite's ~50 test binaries several times faster than the
# default linker (a change to the host library relinked its 29 test
# binaries in 24 s instead of 115 s on two cores). Exported, so every cargo
# run below and in the scripts it calls builds with the same flags and none
# rebuilds what another built.
command -v mold >/dev/null || {
    echo "test: mold is missing: run \`sudo apt-get install mold\` (or scripts/install-test-deps.sh)" >&2
    exit 1
}
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C link-arg=-fuse-ld=mold"
failed=()
python3 scripts/import-circles.py || failed+=("the import-circle check")
mkdir -p target
# The release checks only compile: for two other targets, and the packages.
# They run at idle priority (SCHED_IDLE: only on CPU time nothing else
# wants), in a target directory of their own so that neither side waits on
# the other's build lock, from the start: the build leaves a core idle
# while it links or compiles one last crate, the fast loop waits on timers
# and the tests on their computers. Started after the images, they ran
# about 50 s past the last test pass; at normal priority they would hold
# up the first test by a third of the run.
(CARGO_TARGET_DIR=$PWD/target/release-check chrt --idle 0 \
    nice -n 19 bash scripts/release-check.sh) > target/release-check.log 2>&1 &
checks=$!
# The base image (debootstrap: downloads and unpacking) builds while the
# dependencies compile.
bash scripts/build-base-image.sh > target/base-image.log 2>&1 &
base=$!
# One build of the dependencies serves everything, in the test profile
# (`[profile.dev]`: dependencies optimised): the computerd the image holds
# and the host that host/tests/engine/release_build.rs drives come out of the same
# dependencies as the tests after them. What those tests check hangs on the
# build's `debug_assertions` cfg alone, so their host is this build with
# that cfg off for the host crate; a release-profile build compiled every
# dependency a second time (5m40s of a CI run on two cores). The shipped
# build's own profile is the release workflow's.
# The same dependencies means the same features: a plain `cargo build` of
# the two binaries resolves them without the dev-dependencies (tokio's
# test-util, reqwest's blocking client, rmcp's client), and the test build
# then compiled tokio and 85 other crates again (the test build took 223 s
# after it, now 60 s; quiet machine). Naming test targets (`--test local`, of
# both crates, which the tests need anyway) over the whole workspace makes
# cargo resolve as the test build does; the image's computerd carries
# those features, which add test helpers and no behaviour.
cargo build --locked --workspace --test local \
    --config 'profile.dev.package.computer-use-mcp.debug-assertions=false'
# Copies, which the test build below does not touch while the image build
# reads one of them.
mkdir -p target/suite
cp target/debug/computerd target/suite/computerd
cp target/debug/computer-use-mcp target/suite/computer-use-mcp-release-cfg
export COMPUTER_USE_TEST_RELEASE_BIN=$PWD/target/suite/computer-use-mcp-release-cfg
if ! wait "$base"; then
    cat target/base-image.log >&2
    echo "test: building the base image failed (above)" >&2
    exit 1
fi
phase "the image's computerd and the release_build tests' host are built"
# The image build (mostly downloads and unpacking) and the remote engine
# loading it (about two minutes of disk) go on while the test binaries
# compile; the tests start once both are done.
(COMPUTERD_BIN=$PWD/target/suite/computerd bash scripts/test-setup.sh --images-only \
    && bash scripts/remote-engine.sh up) > target/images.log 2>&1 &
images=$!
# `--tests`: the unit and integration tests, without the examples (which
# `scripts/lint.sh` checks with clippy) and the doc tests (there are none).
cargo test --workspace --locked --tests --no-run
phase "the test binaries are built"
# The fast loop, with Docker and Xvnc out of its reach: it must stay a loop
# that needs neither.
if ! bash scripts/test-fast.sh --prove > target/test-fast.log 2>&1; then
    cat target/test-fast.log >&2
    failed+=("the fast loop without Docker or X (scripts/test-fast.sh)")
fi
phase "the fast loop is done"
if ! wait "$images"; then
    cat target/images.log >&2
    echo "test: building the images or loading them into the remote engine failed (above)" >&2
    exit 1
fi
phase "the images are built and loaded"


# Every test binary runs through scripts/test-runner.sh, which has libtest
# print each test's time; the passes' output is also kept in
# target/test-passes.log, which scripts/test-times.sh tables at the end.
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=$PWD/scripts/test-runner.sh
passes=target/test-passes.log
: > "$passes"
# Four tests at a time on two cores: most of a test's time is spent waiting
# on its computer, its timers and Chromium. The engine binary's 122 tests
# took 324 s side by side four at a time against about 470 s two at a time.
# A test therefore never assumes a quiet machine: it waits on what it
# needs (a still screen, a file written, a window loaded), never a fixed
# time for Chromium or a screen to get there. The release checks (above) use
# what is left. The remote pass stays at two (scripts/test-remote.sh says
# why).
threads=${TEST_THREADS:-4}
# The integration tests of every tier but the fast one (`local`): the unit
# tests and the `local` tiers ran in the fast loop above. The tiers are read
# from cargo, so a new one runs here without being named.
tiers=$(cargo metadata --format-version 1 --no-deps --locked | python3 -c '
import json, sys
names = {t["name"] for p in json.load(sys.stdin)["packages"] for t in p["targets"]
         if t["kind"] == ["test"] and t["name"] != "local"}
print(" ".join("--test " + n for n in sorted(names)))')
echo "test: pass workspace" | tee -a "$passes"
# shellcheck disable=SC2086 # one word per flag
cargo test --workspace $tiers --no-fail-fast -- --test-threads="$threads" 2>&1 \
    | tee -a "$passes" || failed+=("the workspace tests")
phase "workspace tests done"
# The HTTP and remote passes run side by side: each spends most of its
# time waiting (a handoff's long wait, a stopped computer's deadline, the
# remote engine's tunnels), and they share no engine: the HTTP pass's
# computers are this machine's, the remote pass's the remote engine's.
# One after the other they took about 3m30s of a run. Each keeps its
# output in a log of its own, printed whole once it ends, so the two never
# interleave.
http_log=target/test-pass-http.log
remote_log=target/test-pass-remote.log
(echo "test: pass http" && bash scripts/test-http.sh -- --test-threads="$threads") \
    > "$http_log" 2>&1 &
http=$!
(echo "test: pass remote" \
    && bash scripts/test-remote.sh -- --test-threads="${REMOTE_TEST_THREADS:-2}") \
    > "$remote_log" 2>&1 &
remote=$!
wait "$http" || failed+=("the tests over HTTP")
tee -a "$passes" < "$http_log"
phase "HTTP pass done"
wait "$remote" || failed+=("the tests on the remote engine")
tee -a "$passes" < "$remote_log"
phase "remote pass done"

if wait "$checks"; then
    tail -n 1 target/release-check.log >&2
else
    cat target/release-check.log >&2
    failed+=("the release checks")
fi
phase "release checks done"
echo "test: the slowest tests of this run (all in ${passes}.times):"
bash scripts/test-times.sh "$passes" >&2 || true
if [ "${#failed[@]}" -gt 0 ]; then
    printf 'test: failed: %s\n' "${failed[@]}" >&2
    exit 1
fi
echo "test: everything passed in $(((SECONDS - started) / 60)) min"
