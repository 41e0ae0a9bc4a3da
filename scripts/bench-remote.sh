#!/usr/bin/env bash
# What a remote engine costs: computer_observe and `shell true` on the local
# engine beside the tunnel over TLS and over ssh (host/examples/tunnel_bench.rs),
# then file_transfer of 1 GiB through the tunnel beside `docker cp` against
# the same remote engine (host/examples/transfer_bench.rs --only one), each
# way. The remote engine is scripts/remote-engine.sh's (needs root); options
# pass through to transfer_bench (--runs N, --dir PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-docker.sh
bash scripts/bench-image.sh
bash scripts/remote-engine.sh up
env_lines=$(bash scripts/remote-engine.sh env)
tls=$(grep -v '^SSH_' <<<"$env_lines" | tr '\n' ' ')
ssh="DOCKER_HOST=$(sed -n 's/^SSH_DOCKER_HOST=//p' <<<"$env_lines")"
cargo build --release --locked -p computer-use-mcp --bin computer-use-mcp \
    --example tunnel_bench --example transfer_bench
bin="${CARGO_TARGET_DIR:-target}/release/examples"
TUNNEL_BENCH_TLS="$tls" TUNNEL_BENCH_SSH="$ssh" "$bin/tunnel_bench"
for way in tls ssh; do
    echo "file_transfer through the tunnel over $way, beside docker cp against the same engine:"
    if [ "$way" = tls ]; then vars=$tls; else vars=$ssh; fi
    # shellcheck disable=SC2086 # the variables are NAME=value words
    env -u DOCKER_HOST -u DOCKER_CONTEXT $vars "$bin/transfer_bench" --only one "$@"
done
