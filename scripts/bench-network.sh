#!/usr/bin/env bash
# What the network guard costs: the same requests from two containers of the
# computer image, side by side in one run, one with its guard (the way the
# host runs it, in `open` mode) and one without, against the test internet
# (scripts/test-internet.sh: a server on a documentation address in a
# network namespace of this machine).
#
# Rows: time to the first byte of a small GET (connection set-up through the
# guard's proxy included), median of ROUNDS; a download of BYTES, median
# throughput of DOWNLOADS, once as fast as this machine goes (server, client
# and guard share its cores, so this row is the guard's CPU cost) and once
# with the test internet's link shaped to LINK_RATE (what a download from
# the internet meets). Prints a table with medians and guarded/direct ratios.
#
# Usage: scripts/bench-network.sh
# Env:   ROUNDS (30), DOWNLOADS (3), BYTES (1073741824), LINK_RATE (1gbit)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-30}
downloads=${DOWNLOADS:-3}
bytes=${BYTES:-1073741824}
link_rate=${LINK_RATE:-1gbit}
image=${COMPUTER_USE_IMAGE:-computer-use-mcp:dev}
[ -n "${COMPUTER_USE_IMAGE:-}" ] || bash scripts/bench-image.sh
direct=cu-bench-direct
guarded=cu-bench-guarded

say() { printf 'bench-network: %s\n' "$*" >&2; }
# The test internet's side of its veth pair (scripts/test-internet.sh).
shaped_if=cu-inet-n
unshape() { ip netns exec cu-inet tc qdisc del dev "$shaped_if" root 2>/dev/null || true; }
cleanup() {
    unshape
    docker rm -f "$direct" "$guarded" "$guarded-network" >/dev/null 2>&1 || true
}
trap cleanup EXIT

bash scripts/test-internet.sh up
server=$(bash scripts/test-internet.sh env | sed -n 's/^INET_ALLOWED_IP=//p')
cleanup
docker run -d --name "$direct" --cap-drop NET_RAW --cap-drop NET_ADMIN \
    --entrypoint sleep "$image" infinity >/dev/null
# As the host runs them: the guard owns the network namespace (with the
# namespace's byte counters on, for its kernel path) and the computer joins it.
docker run -d --name "$guarded-network" --user root \
    --cap-drop ALL --cap-add NET_ADMIN --security-opt no-new-privileges \
    --sysctl net.netfilter.nf_conntrack_acct=1 \
    --entrypoint /usr/local/bin/computerd "$image" net-guard run '{"mode":"open"}' >/dev/null
docker run -d --name "$guarded" --network "container:$guarded-network" \
    --cap-drop NET_RAW --cap-drop NET_ADMIN \
    --entrypoint sleep "$image" infinity >/dev/null
deadline=$((SECONDS + 20))
until docker logs "$guarded-network" 2>&1 | grep -q 'network guard: ready'; do
    [ "$SECONDS" -lt "$deadline" ] || { docker logs "$guarded-network" >&2; exit 1; }
    sleep 0.1
done

# Which way the guard forwards `open` mode's connections: the kernel path
# (it logs them from conntrack) or its proxy (a guard without counters).
path=proxy
docker logs "$guarded-network" 2>&1 | grep -q 'kernel_path[^ ]*=[^ ]*true' && path=kernel
say "the guard forwards open mode's connections by its $path path"

# Median of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Seconds to the first byte of `rounds` small GETs, one curl each.
first_byte() {
    docker exec -u computer "$1" bash -c "for i in \$(seq $rounds); do curl -s -o /dev/null -w '%{time_starttransfer}\n' http://$server/; done"
}

# Bytes per second of `downloads` downloads of `bytes`.
download() {
    docker exec -u computer "$1" bash -c "for i in \$(seq $downloads); do curl -s -o /dev/null -w '%{speed_download}\n' http://$server/bytes/$bytes; done"
}

say "warming up"
first_byte "$direct" >/dev/null
first_byte "$guarded" >/dev/null
say "first byte, $rounds rounds each, alternating"
d_fb=$(first_byte "$direct" | median)
g_fb=$(first_byte "$guarded" | median)
say "downloads of $bytes bytes, $downloads each"
d_dl=$(download "$direct" | median)
g_dl=$(download "$guarded" | median)
say "the same downloads over a link of $link_rate"
ip netns exec cu-inet tc qdisc replace dev "$shaped_if" root tbf rate "$link_rate" burst 1mb latency 50ms
d_link=$(download "$direct" | median)
g_link=$(download "$guarded" | median)
unshape

awk -v path="$path" -v dfb="$d_fb" -v gfb="$g_fb" -v ddl="$d_dl" -v gdl="$g_dl" -v dlk="$d_link" -v glk="$g_link" -v rate="$link_rate" -v n="$bytes" 'BEGIN {
    printf "%-34s %12s %12s %9s\n", "row (median)", "direct", "guarded (" path ")", "ratio"
    printf "%-34s %10.2f ms %10.2f ms %8.2fx   (+%.2f ms)\n", "first byte of a small GET", dfb * 1000, gfb * 1000, gfb / dfb, (gfb - dfb) * 1000
    printf "%-34s %8.0f MB/s %8.0f MB/s %8.2fx\n", "download of " n / 1048576 " MiB", ddl / 1e6, gdl / 1e6, gdl / ddl
    printf "%-34s %8.0f MB/s %8.0f MB/s %8.2fx\n", "the same over a " rate " link", dlk / 1e6, glk / 1e6, glk / dlk
}'
