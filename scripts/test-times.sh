#!/usr/bin/env bash
# The slowest tests of a run, from a log of test binaries run through
# scripts/test-runner.sh (`test NAME ... ok <SECONDS>s>`): the 20 slowest
# with the pass and binary each ran in, then the wall time each binary's
# tests summed to. The passes and binaries are named by the lines
# scripts/test.sh, cargo and the pass scripts print before their tests.
#
# Usage: scripts/test-times.sh LOG [COUNT]
set -euo pipefail
log=$1
count=${2:-20}
awk '
    /^test: pass / { pass = $3; next }
    /^ *Running / {
        bin = $NF; gsub(/[()]/, "", bin); sub(/.*\//, "", bin); sub(/-[0-9a-f]+$/, "", bin)
        if ($2 == "unittests") bin = bin "[" $3 "]"
        next
    }
    /^test-(http|remote): .* over / { bin = "engine"; next }
    /^test .* \.\.\. (ok|FAILED) <[0-9.]+s>$/ {
        seconds = $NF; gsub(/[<>s]/, "", seconds)
        printf "%.1f\t%s\t%s\t%s\t%s\n", seconds, pass, bin, $2, $(NF - 1)
    }
' "$log" | sort -t$'\t' -k1,1nr >"$log.times"
printf '%-8s %-10s %-16s %s\n' seconds pass binary test
head -n "$count" "$log.times" | awk -F'\t' '{ printf "%-8s %-10s %-16s %s%s\n", $1, $2, $3, $4, ($5 == "FAILED" ? " (FAILED)" : "") }'
echo
printf '%-8s %-10s %s\n' "sum (s)" pass binary
awk -F'\t' '{ sum[$2 "\t" $3] += $1 } END { for (k in sum) printf "%.0f\t%s\n", sum[k], k }' "$log.times" \
    | sort -t$'\t' -k1,1nr | awk -F'\t' '{ printf "%-8s %-10s %s\n", $1, $2, $3 }'
