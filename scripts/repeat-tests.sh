#!/usr/bin/env bash
# Runs the whole test suite N times in a row from one build and prints, for
# every test, how often it passed and failed: the check that the suite never
# flakes. Failures come first; each run's full output stays in the log folder.
#
# Usage: scripts/repeat-tests.sh [N]   (N defaults to 5)
# Env:   TEST_THREADS        threads per test binary, as in scripts/test.sh (4)
#        REPEAT_LOG_DIR      where the run logs go (a new temporary folder)
#        REPEAT_RUN_LIMIT    seconds one run may take before it counts as red (2700)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-5}
case "$runs" in
    '' | *[!0-9]* | 0) echo "repeat-tests: N must be a whole number of runs, at least 1 (got \`$runs\`)" >&2; exit 2 ;;
esac
logs=${REPEAT_LOG_DIR:-$(mktemp -d /tmp/repeat-tests.XXXXXX)}
mkdir -p "$logs"

bash scripts/test-setup.sh
# One build for every run: the runs below only execute what this compiled.
cargo test --workspace --tests --no-run

# One run, as scripts/test.sh runs it: the workspace, then the MCP tests over
# HTTP, which the table names engine@http to keep the two transports apart.
run_once() {
    set -o pipefail
    local threads=${TEST_THREADS:-4} status=0
    cargo test --workspace --tests --no-fail-fast -- --test-threads="$threads" || status=1
    bash scripts/test-http.sh -- --test-threads="$threads" 2>&1 || status=1
    return $status
}

failed_runs=0
for i in $(seq 1 "$runs"); do
    started=$SECONDS
    if timeout "${REPEAT_RUN_LIMIT:-2700}" bash -c "$(declare -f run_once); run_once" \
        >"$logs/run-$i.log" 2>&1; then
        verdict=green
    else
        verdict=red
        failed_runs=$((failed_runs + 1))
    fi
    echo "run $i/$runs: $verdict in $((SECONDS - started)) s ($logs/run-$i.log)"
done

# Each result line belongs to the test binary named by the `Running` line
# (or the HTTP pass's own line) above it.
awk '
    /^ *Running / {
        bin = $NF; gsub(/[()]/, "", bin); sub(/.*\//, "", bin); sub(/-[0-9a-f]+$/, "", bin)
        if ($2 == "unittests") bin = bin "[" $3 "]"
        next
    }
    /^test-http: .* over HTTP/ { bin = "engine@http"; next }
    # The HTTP pass runs through scripts/test-runner.sh: `... ok <1.234s>`.
    /^test .* \.\.\. (ok|FAILED)( <[0-9.]+s>)?$/ {
        name = $2
        for (i = 3; $i != "..."; i++) name = name " " $i
        key = bin "::" name
        if ($(i + 1) == "ok") pass[key]++; else fail[key]++
        seen[key] = 1
    }
    END {
        for (k in seen) printf "%d\t%d\t%s\n", fail[k] + 0, pass[k] + 0, k
    }
' "$logs"/run-*.log | sort -t$'\t' -k1,1nr -k3,3 >"$logs/table.tsv"

printf '\n%-6s %-6s %s\n' passed failed test
awk -F'\t' '{ printf "%-6s %-6s %s\n", $2, $1, $3 }' "$logs/table.tsv"
tests=$(wc -l <"$logs/table.tsv")
flaky=$(awk -F'\t' '$1 > 0' "$logs/table.tsv" | wc -l)
echo
echo "$runs run(s), $failed_runs red; $tests tests, $flaky with a failure; logs in $logs"
[ "$failed_runs" -eq 0 ]
