#!/usr/bin/env bash
# A "remote" Docker engine on this machine, for the remote-engine tests: a
# second dockerd in a network namespace of its own, reached only over a veth
# pair, listening with TLS on its veth address, and an sshd beside it whose
# sessions talk to that engine (for `ssh://` and `docker system dial-stdio`).
# The ports that engine publishes are on the namespace's loopback, so they
# are out of reach from here, as on a real remote machine.
#
# Usage: scripts/remote-engine.sh up|down|env
#   up    creates it (idempotent), loads computer-use-mcp:dev and
#         debian:trixie into it, and makes `ssh cu-remote` reach it (a
#         `Host cu-remote` block in the state folder, included from root's
#         ~/.ssh/config by one marked line)
#   down  removes it (the namespace, the veth pair, both daemons, the state,
#         the include line)
#   env   prints the variables that point a client at it: TLS, and
#         DOCKER_HOST=ssh://cu-remote
#
# Nothing listens on anything but the namespace's addresses; traffic goes
# only between this machine and that namespace.
set -euo pipefail

NS=cu-remote
HOST_IF=cu-remote-h
NS_IF=cu-remote-n
HOST_IP=10.231.0.1
NS_IP=10.231.0.2
STATE=${COMPUTER_USE_REMOTE_STATE:-/var/tmp/computer-use-remote}
CERTS=$STATE/certs
SOCK=$STATE/docker.sock
IMAGE=${COMPUTER_USE_REMOTE_IMAGE:-computer-use-mcp:dev}
# A small image for tests that only need a container.
SMALL_IMAGE=debian:trixie
SSH_ALIAS=cu-remote
# ssh reads the config of the user's home in the password database, not $HOME.
SSH_CONFIG=$(getent passwd "$(id -u)" | cut -d: -f6)/.ssh/config
INCLUDE_MARK="# computer-use-mcp scripts/remote-engine.sh: removed by its down"

say() { echo "remote-engine: $*" >&2; }
die() { say "$*"; exit 1; }
# Only the network namespace: `ip netns exec` also remounts /sys, which
# hides the cgroup mounts dockerd needs.
in_ns() { nsenter --net="/var/run/netns/$NS" "$@"; }

# shellcheck source=scripts/pid-file.sh
. "$(dirname "$0")/pid-file.sh"

make_certs() {
    [ -f "$CERTS/key.pem" ] && return
    mkdir -p "$CERTS"
    cd "$CERTS"
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=computer-use test CA" \
        -keyout ca-key.pem -out ca.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$NS_IP" \
        -keyout server-key.pem -out server.csr 2>/dev/null
    printf 'subjectAltName=IP:%s\nextendedKeyUsage=serverAuth\n' "$NS_IP" > server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial \
        -days 30 -extfile server.ext -out server-cert.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=client" \
        -keyout key.pem -out client.csr 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' > client.ext
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial \
        -days 30 -extfile client.ext -out cert.pem 2>/dev/null
    chmod 0600 ./*-key.pem key.pem
    cd - >/dev/null
}

make_network() {
    ip netns list | grep -qw "$NS" || ip netns add "$NS"
    if ! ip link show "$HOST_IF" >/dev/null 2>&1; then
        ip link add "$HOST_IF" type veth peer name "$NS_IF"
        ip link set "$NS_IF" netns "$NS"
        ip addr add "$HOST_IP/30" dev "$HOST_IF"
        ip link set "$HOST_IF" up
        in_ns ip addr add "$NS_IP/30" dev "$NS_IF"
        in_ns ip link set "$NS_IF" up
        in_ns ip link set lo up
    fi
}

# The engine keeps its images and containers in memory: a tmpfs on its data
# root. On disk, the computer image (2.9 GB) took that much again, and
# `docker load` first unpacks the whole saved image into the data root
# (2.7 GB more until the load ends): 5.6 GB of disk at the peak of a CI run,
# which a CI machine once did not have. In memory it is gone with the
# machine, so nothing a run leaves fills the disk of the next. 10 GB is a
# limit, not a reservation: a tmpfs takes only what is written to it.
mount_data_root() {
    local data=$STATE/data
    mountpoint -q "$data" && return
    # What an engine of an earlier boot left on disk under the mount point.
    findmnt -rno TARGET | grep "^$data/" | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
    rm -rf "$data"
    mkdir -p "$data"
    mount -t tmpfs -o size=10g,mode=0711 cu-remote-data "$data"
}

start_dockerd() {
    if [ -S "$SOCK" ] && docker -H "unix://$SOCK" version >/dev/null 2>&1; then return; fi
    mount_data_root
    mkdir -p "$STATE/exec"
    # Its own containerd namespaces: the machine's containerd socket is
    # visible here too, and must not mix this engine's containers with the
    # machine engine's. The daemon must not inherit the lock `up` holds
    # (fd 9), or every later `up` would wait for as long as it runs.
    in_ns setsid dockerd \
        --data-root "$STATE/data" --exec-root "$STATE/exec" --pidfile "$STATE/docker.pid" \
        --containerd-namespace cu-remote --containerd-plugins-namespace cu-remote-plugins \
        -H "unix://$SOCK" -H "tcp://$NS_IP:2376" \
        --tlsverify --tlscacert "$CERTS/ca.pem" \
        --tlscert "$CERTS/server-cert.pem" --tlskey "$CERTS/server-key.pem" \
        >"$STATE/dockerd.log" 2>&1 </dev/null 9>&- &
    for _ in $(seq 150); do
        docker -H "unix://$SOCK" version >/dev/null 2>&1 && return
        sleep 0.2
    done
    die "the remote dockerd did not answer within 30 s; see $STATE/dockerd.log"
}

# sshd on the namespace's address, its sessions pointed at this engine, so
# `ssh root@NS_IP docker system dial-stdio` reaches it the way the docker
# CLI's `ssh://` does. The client's key and known_hosts are in $STATE/ssh.
start_sshd() {
    local dir=$STATE/ssh
    if pid_file_runs "$dir/sshd.pid" sshd; then return; fi
    mkdir -p "$dir"
    chmod 0700 "$dir"
    [ -f "$dir/host_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
    [ -f "$dir/client_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$dir/client_key"
    cp "$dir/client_key.pub" "$dir/authorized_keys"
    printf '%s %s\n' "$NS_IP" "$(cut -d' ' -f1,2 "$dir/host_key.pub")" > "$dir/known_hosts"
    cat > "$dir/sshd_config" <<CONFIG
ListenAddress $NS_IP:22
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
SetEnv DOCKER_HOST=unix://$SOCK
CONFIG
    mkdir -p /run/sshd
    in_ns /usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log" 9>&- \
        || die "sshd did not start; see $dir/sshd.log (apt-get install openssh-server)"
}

# `ssh cu-remote` with no other flags, for the docker CLI and for the host
# alike: the block lives in the state folder, and one marked line in root's
# ~/.ssh/config includes it (ssh reads Include only at the top, before any
# Host block, so the line goes first).
write_ssh_config() {
    local dir=$STATE/ssh
    # The tests' own docker commands, marked by COMPUTER_USE_TEST_HARNESS
    # (host/tests/support/docker.rs), share one login: each was a login of
    # its own, about 0.35 s, and a test over ssh makes a dozen. The host
    # under test is not marked, so it shares its connections as it would
    # for a user, by itself.
    cat > "$dir/client_config" <<CONFIG
Match originalhost $SSH_ALIAS exec "printenv COMPUTER_USE_TEST_HARNESS"
    ControlMaster auto
    ControlPath $dir/harness-%C
    ControlPersist 60
Host $SSH_ALIAS
    HostName $NS_IP
    User root
    IdentityFile $dir/client_key
    UserKnownHostsFile $dir/known_hosts
    IdentitiesOnly yes
    BatchMode yes
CONFIG
    mkdir -p "$(dirname "$SSH_CONFIG")"
    chmod 0700 "$(dirname "$SSH_CONFIG")"
    touch "$SSH_CONFIG"
    if ! grep -qF "$INCLUDE_MARK" "$SSH_CONFIG"; then
        { printf 'Include %s %s\n' "$dir/client_config" "$INCLUDE_MARK"; cat "$SSH_CONFIG"; } > "$SSH_CONFIG.new"
        chmod 0600 "$SSH_CONFIG.new"
        mv "$SSH_CONFIG.new" "$SSH_CONFIG"
    fi
}

remove_ssh_include() {
    [ -f "$SSH_CONFIG" ] || return 0
    if grep -qF "$INCLUDE_MARK" "$SSH_CONFIG"; then
        grep -vF "$INCLUDE_MARK" "$SSH_CONFIG" > "$SSH_CONFIG.new" || true
        chmod 0600 "$SSH_CONFIG.new"
        mv "$SSH_CONFIG.new" "$SSH_CONFIG"
    fi
}

load_image() {
    local image=$1 hint=$2 here there
    here=$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null) \
        || die "$image is not on this machine's engine: $hint"
    # The same tag rebuilt here is loaded again.
    there=$(docker -H "unix://$SOCK" image inspect -f '{{.Id}}' "$image" 2>/dev/null || true)
    [ "$here" = "$there" ] && return
    say "loading $image into the remote engine"
    docker save "$image" | docker -H "unix://$SOCK" load >/dev/null
    # The image the tag named before, if any: nothing else uses it.
    docker -H "unix://$SOCK" image prune --force >/dev/null
}

case "${1:-}" in
    up)
        [ "$(id -u)" = 0 ] || die "needs root (network namespaces, a second dockerd)"
        # One `up` at a time: scripts/test.sh starts one early, in the
        # background, and the tests' own `up` waits for it here.
        exec 9>"$STATE.lock"
        flock 9
        make_certs
        make_network
        start_dockerd
        start_sshd
        write_ssh_config
        load_image "$IMAGE" "run scripts/build-image.sh first"
        load_image "$SMALL_IMAGE" "run scripts/build-base-image.sh first"
        say "up: tcp://$NS_IP:2376 (TLS) and ssh://$SSH_ALIAS (see \`$0 env\`)"
        ;;
    down)
        pids=()
        for pid in "$STATE/ssh/sshd.pid" "$STATE/docker.pid"; do
            if [ -f "$pid" ]; then
                pids+=("$(cat "$pid")")
                kill "${pids[-1]}" 2>/dev/null || true
            fi
        done
        # dockerd unmounts its data root on its way out: wait for the exit,
        # not only the socket, or the removal below meets a busy mount.
        for pid in "${pids[@]}"; do
            for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        done
        findmnt -rno TARGET | grep "^$STATE/" | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
        ip link del "$HOST_IF" 2>/dev/null || true
        ip netns del "$NS" 2>/dev/null || true
        remove_ssh_include
        rm -rf "$STATE"
        ;;
    env)
        # TLS, then ssh (through the `Host cu-remote` block `up` wrote).
        printf 'DOCKER_HOST=tcp://%s:2376\nDOCKER_TLS_VERIFY=1\nDOCKER_CERT_PATH=%s\n' "$NS_IP" "$CERTS"
        printf 'SSH_DOCKER_HOST=ssh://%s\n' "$SSH_ALIAS"
        ;;
    *) die "usage: $0 up|down|env" ;;
esac
