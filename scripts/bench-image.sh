#!/usr/bin/env bash
# The image a benchmark runs: computer-use-mcp:dev with a release computerd
# built from this tree. The test suite tags the same name with its own
# unoptimized computerd (scripts/test.sh), whose frames take ten times as
# long, so every benchmark builds this first; with nothing changed it is a
# no-op of a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
# The same CA rule as scripts/test-setup.sh, so the build reuses its layers.
if [ -z "${COMPUTER_USE_EXTRA_CA:-}" ] && [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    export COMPUTER_USE_EXTRA_CA=/etc/ssl/certs/ca-certificates.crt
fi
unset COMPUTERD_BIN
bash scripts/build-image.sh
