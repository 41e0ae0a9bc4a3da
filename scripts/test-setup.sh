#!/usr/bin/env bash
# Installs and builds everything the test suite drives for real, on a Debian
# or Ubuntu machine: Xvnc, Fluxbox, xterm, Chromium, a Docker engine, the
# debian:trixie base image, the computer-use-mcp:dev image, noVNC and
# Playwright, and the release checks' tools (actionlint, zizmor, the Windows
# and macOS Rust targets). It first removes what an earlier, interrupted run
# left (scripts/sweep-test-leftovers.sh). Safe to re-run: each step does only
# what is missing.
#
# Usage: scripts/test-setup.sh [--without-images | --images-only]
# scripts/test.sh runs the two halves apart, so that the images build while
# the Rust builds use the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

part=${1:-all}
case "$part" in
    all | --without-images | --images-only) ;;
    *) echo "test-setup: unknown option \`$part\`; use --without-images or --images-only" >&2; exit 2 ;;
esac

if [ "$part" != --images-only ]; then
    bash scripts/install-test-deps.sh
    bash scripts/install-release-tools.sh
    bash scripts/ensure-docker.sh
    bash scripts/sweep-test-leftovers.sh
fi
if [ "$part" != --without-images ]; then
    # Behind a proxy that re-signs https, the image build must trust the
    # host's CA bundle; trusting the system store is harmless everywhere else.
    if [ -z "${COMPUTER_USE_EXTRA_CA:-}" ] && [ -f /etc/ssl/certs/ca-certificates.crt ]; then
        export COMPUTER_USE_EXTRA_CA=/etc/ssl/certs/ca-certificates.crt
    fi
    bash scripts/build-image.sh
fi
[ "$part" = --images-only ] && exit 0
# The viewer's browser tests: noVNC for the work tree's page, Playwright.
bash scripts/fetch-novnc.sh
npm ci --prefix computerd/tests/browser --no-audit --no-fund
# The official MCP TypeScript SDK, for the test that lists the tools with it.
npm ci --prefix host/tests/node --no-audit --no-fund
