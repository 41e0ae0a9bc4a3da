#!/usr/bin/env bash
# A fake "internet" on this machine, for network tests of containers on the
# local Docker engine's default bridge: a network namespace reached over a
# veth pair, holding a few "public" addresses and the servers behind them.
#
#   198.51.100.130     allowed.test         HTTP :80, HTTPS :443, echo :7000
#   198.51.100.131     *.allowed.test       the same servers
#   198.51.100.140     denied.test          the same servers
#   198.51.100.153     DNS :53 (UDP, TCP)   the names above, metadata.test
#   169.254.169.254  a fake cloud metadata service (the same servers)
#
# HTTP answers any method with `hello from <address> host=<Host>`, and
# `GET /bytes/N` with N zero bytes (for throughput). HTTPS gives the same
# answers with a self-signed certificate for allowed.test, *.allowed.test and
# denied.test (its path is INET_CERT in `env`). DNS answers A queries for
# those names and metadata.test, an empty answer for their AAAA, and
# NXDOMAIN for any other name.
#
# Usage: scripts/test-internet.sh up|down|env
#   up    creates it (idempotent) and waits until every server answers
#   down  removes it (the servers, the namespace, the veth pair, the routes,
#         the FORWARD rules, the state folder)
#   env   prints INET_* variables for the tests
#
# Only documentation addresses of 198.51.100.0/24: 203.0.113.0/24 is not
# free on every machine (a sandbox's package mirror may live there), and a
# route over it would cut the machine off.
#
# Containers reach it through Docker's own NAT: the host routes 198.51.100.128/25
# and 169.254.169.254 to the namespace, and Docker masquerades what leaves
# docker0. Traffic goes only between this machine, its containers and that
# namespace.
set -euo pipefail

NS=cu-inet
HOST_IF=cu-inet-h
NS_IF=cu-inet-n
HOST_IP=198.51.100.1
NS_IP=198.51.100.2
NET=198.51.100.128/25
ALLOWED_IP=198.51.100.130
WWW_IP=198.51.100.131
DENIED_IP=198.51.100.140
DNS_IP=198.51.100.153
METADATA_IP=169.254.169.254
STATE=${COMPUTER_USE_INET_STATE:-/var/tmp/computer-use-inet}
CERT=$STATE/cert.pem
KEY=$STATE/key.pem
SERVERS=$STATE/servers.py
PIDFILE=$STATE/servers.pid
LOG=$STATE/servers.log
# Docker's own rules normally let docker0 <-> cu-inet-h through already;
# these are a fallback, appended after them, so they never override Docker's
# isolation rules or anything in DOCKER-USER.
FORWARD_RULES=(
    "-i docker0 -o $HOST_IF -j ACCEPT"
    "-i $HOST_IF -o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT"
)

say() { echo "test-internet: $*" >&2; }
die() { say "$*"; exit 1; }
in_ns() { ip netns exec "$NS" "$@"; }

make_network() {
    ip netns list | grep -qw "$NS" || ip netns add "$NS"
    if ! ip link show "$HOST_IF" >/dev/null 2>&1; then
        ip link add "$HOST_IF" type veth peer name "$NS_IF"
        ip link set "$NS_IF" netns "$NS"
    fi
    ip addr replace "$HOST_IP/30" dev "$HOST_IF"
    ip link set "$HOST_IF" up
    in_ns ip link set lo up
    in_ns ip addr replace "$NS_IP/30" dev "$NS_IF"
    in_ns ip link set "$NS_IF" up
    local ip
    for ip in "$ALLOWED_IP" "$WWW_IP" "$DENIED_IP" "$DNS_IP" "$METADATA_IP"; do
        in_ns ip addr replace "$ip/32" dev lo
    done
    in_ns ip route replace default via "$HOST_IP" dev "$NS_IF"
    ip route replace "$NET" via "$NS_IP" dev "$HOST_IF"
    ip route replace "$METADATA_IP/32" via "$NS_IP" dev "$HOST_IF"
    sysctl -qw net.ipv4.ip_forward=1
    local rule
    for rule in "${FORWARD_RULES[@]}"; do
        # shellcheck disable=SC2086 # the rule is words on purpose
        iptables -C FORWARD $rule 2>/dev/null || iptables -A FORWARD $rule
    done
}

# Made again when it has less than a day left, so a long-lived `up` renews it.
# Sets CHANGED when it makes one.
make_cert() {
    if [ -f "$CERT" ] && openssl x509 -checkend 86400 -noout -in "$CERT" >/dev/null 2>&1; then
        return
    fi
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=allowed.test" \
        -addext "subjectAltName=DNS:allowed.test,DNS:*.allowed.test,DNS:denied.test" \
        -keyout "$KEY.new" -out "$CERT.new" 2>/dev/null
    chmod 0600 "$KEY.new"
    mv "$KEY.new" "$KEY"
    mv "$CERT.new" "$CERT"
    CHANGED=1
}

# Sets CHANGED when servers.py is new or differs from the one written before.
write_servers() {
    cat > "$SERVERS.new" <<'PY'
"""The servers of scripts/test-internet.sh, run in its network namespace.

Usage: servers.py CERT KEY DNS_ADDRESS
"""
import os
import socket
import socketserver
import ssl
import struct
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = b"\0" * (1 << 20)
TTL = 5
TIMEOUT = 60
A, AAAA = 1, 28


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = TIMEOUT

    def __getattr__(self, name):
        # Any method: do_GET, do_POST, do_WHATEVER.
        if name.startswith("do_"):
            return self.answer
        raise AttributeError(name)

    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        while length > 0:
            got = self.rfile.read(min(length, len(CHUNK)))
            if not got:
                break
            length -= len(got)
        if self.command == "GET" and self.path.startswith("/bytes/"):
            try:
                size = int(self.path[len("/bytes/"):])
            except ValueError:
                size = -1
            if size >= 0:
                return self.stream(size)
        here = self.connection.getsockname()[0]
        body = f"hello from {here} host={self.headers.get('Host', '')}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def stream(self, size):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        view = memoryview(CHUNK)
        while size > 0:
            n = min(size, len(CHUNK))
            self.wfile.write(view[:n])
            size -= n


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class HTTPSServer(HTTPServer):
    """The handshake happens in the connection's thread, not in accept."""

    def __init__(self, address, context):
        super().__init__(address, Handler)
        self.context = context

    def finish_request(self, request, client_address):
        request.settimeout(TIMEOUT)
        try:
            request = self.context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            return
        super().finish_request(request, client_address)


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.settimeout(TIMEOUT)
        while True:
            data = self.request.recv(65536)
            if not data:
                break
            self.request.sendall(data)
        self.request.shutdown(socket.SHUT_WR)


class EchoServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


NAMES = {
    "allowed.test": "198.51.100.130",
    "denied.test": "198.51.100.140",
    "metadata.test": "169.254.169.254",
}


def lookup(name):
    name = name.lower().rstrip(".")
    if name in NAMES:
        return NAMES[name]
    if name.endswith(".allowed.test"):
        return "198.51.100.131"
    return None


def dns_answer(query):
    """The reply to one DNS message, or None when it is too broken to answer."""
    if len(query) < 12:
        return None
    qid, flags, qdcount = struct.unpack("!HHH", query[:6])
    if flags & 0x8000:
        return None  # a response, not a query
    opcode = (flags >> 11) & 0xF
    # QR, the opcode, AA, RD as asked, RA.
    reply_flags = 0x8000 | (opcode << 11) | 0x0400 | (flags & 0x0100) | 0x0080

    def reply(rcode, question=b"", answers=()):
        header = struct.pack("!HHHHHH", qid, reply_flags | rcode,
                             1 if question else 0, len(answers), 0, 0)
        return header + question + b"".join(answers)

    if opcode != 0:
        return reply(4)  # NOTIMP
    if qdcount != 1:
        return reply(1)  # FORMERR
    labels, at = [], 12
    while True:
        if at >= len(query):
            return reply(1)
        n = query[at]
        at += 1
        if n == 0:
            break
        if n & 0xC0 or at + n > len(query):
            return reply(1)  # no compression in a question
        labels.append(query[at:at + n].decode("ascii", "replace"))
        at += n
    if at + 4 > len(query):
        return reply(1)
    qtype, qclass = struct.unpack("!HH", query[at:at + 4])
    question = query[12:at + 4]
    address = lookup(".".join(labels))
    if address is None:
        return reply(3, question)  # NXDOMAIN
    if qtype != A or qclass != 1:
        return reply(0, question)  # the name exists, with no such record
    record = struct.pack("!HHHIH", 0xC00C, A, 1, TTL, 4) + socket.inet_aton(address)
    return reply(0, question, [record])


class DNSUDP(socketserver.BaseRequestHandler):
    def handle(self):
        data, sock = self.request
        answer = dns_answer(data)
        if answer is not None:
            sock.sendto(answer, self.client_address)


class DNSTCP(socketserver.StreamRequestHandler):
    timeout = TIMEOUT

    def handle(self):
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return
            (n,) = struct.unpack("!H", head)
            data = self.rfile.read(n)
            if len(data) < n:
                return
            answer = dns_answer(data)
            if answer is None:
                return
            self.wfile.write(struct.pack("!H", len(answer)) + answer)
            self.wfile.flush()


class UDPServer(socketserver.ThreadingUDPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    cert, key, dns = sys.argv[1:4]
    # Nothing inherited past stdio: a caller waiting on a pipe it passed
    # down must not wait for as long as the servers run.
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    servers = [
        HTTPServer(("0.0.0.0", 80), Handler),
        HTTPSServer(("0.0.0.0", 443), context),
        EchoServer(("0.0.0.0", 7000), Echo),
        UDPServer((dns, 53), DNSUDP),
        EchoServer((dns, 53), DNSTCP),
    ]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print("servers: listening", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
PY
    if cmp -s "$SERVERS.new" "$SERVERS"; then
        rm "$SERVERS.new"
        return
    fi
    mv "$SERVERS.new" "$SERVERS"
    CHANGED=1
}

# Whether that pid is the servers: not `kill -0`, which a zombie passes (on
# this machine pid 1 may take its time to reap them), nor a reused pid. A
# zombie's cmdline is empty.
is_servers() { tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -qF "$SERVERS"; }
running() { [ -f "$PIDFILE" ] && is_servers "$(cat "$PIDFILE")"; }

stop_servers() {
    running || return 0
    local pid
    pid=$(cat "$PIDFILE")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do is_servers "$pid" || break; sleep 0.1; done
    is_servers "$pid" && kill -9 "$pid" 2>/dev/null
    rm -f "$PIDFILE"
}

start_servers() {
    running && return
    # The interpreter itself, not a shim that needs this shell's environment.
    local python
    python=$(python3 -c 'import sys; print(sys.executable)')
    # The servers must not inherit the lock `up` holds (fd 9), or every
    # later `up` would wait for as long as they run.
    # Not through in_ns: a function in the background is a subshell, and
    # $! would be its pid, not the server's.
    ip netns exec "$NS" setsid "$python" -u "$SERVERS" "$CERT" "$KEY" "$DNS_IP" \
        >>"$LOG" 2>&1 </dev/null 9>&- &
    echo $! > "$PIDFILE"
}

# One DNS query over UDP or TCP from the host; prints the A answer, or the
# rcode when there is none.
dns_query() {
    python3 - "$DNS_IP" "$1" "$2" <<'PY'
import socket, struct, sys
server, name, proto = sys.argv[1:4]
q = struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0"
q += struct.pack("!HH", 1, 1)
if proto == "udp":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    s.sendto(q, (server, 53))
    r = s.recv(512)
else:
    s = socket.create_connection((server, 53), timeout=1)
    s.sendall(struct.pack("!H", len(q)) + q)
    n = struct.unpack("!H", s.recv(2))[0]
    r = b""
    while len(r) < n:
        r += s.recv(n - len(r))
assert r[:2] == q[:2]
if struct.unpack("!H", r[6:8])[0]:
    print(socket.inet_ntoa(r[-4:]))
else:
    print("rcode", r[3] & 0xF)
PY
}

ready() {
    curl -fsS --noproxy "*" --max-time 2 "http://$ALLOWED_IP/" >/dev/null 2>&1 \
        && curl -fsS --noproxy "*" --max-time 2 --cacert "$CERT" --resolve "allowed.test:443:$ALLOWED_IP" \
            https://allowed.test/ >/dev/null 2>&1 \
        && [ "$(dns_query allowed.test udp 2>/dev/null)" = "$ALLOWED_IP" ] \
        && [ "$(dns_query allowed.test tcp 2>/dev/null)" = "$ALLOWED_IP" ]
}

wait_ready() {
    local deadline=$((SECONDS + 30))
    until ready; do
        running || die "the servers exited; see $LOG"
        [ "$SECONDS" -lt "$deadline" ] || die "the servers did not answer within 30 s; see $LOG"
        sleep 0.2
    done
}

case "${1:-}" in
    up)
        [ "$(id -u)" = 0 ] || die "needs root (a network namespace, routes, iptables)"
        mkdir -p "$STATE"
        exec 9>"$STATE.lock"
        flock 9
        make_network
        # A new certificate or a new servers.py: the running servers go.
        CHANGED=0
        make_cert
        write_servers
        [ "$CHANGED" = 0 ] || stop_servers
        start_servers
        wait_ready
        say "up: allowed.test=$ALLOWED_IP denied.test=$DENIED_IP dns=$DNS_IP (see \`$0 env\`)"
        ;;
    down)
        stop_servers
        # Anything else still running in the namespace (a server whose pid
        # file went missing) would keep the namespace alive.
        if ip netns list | grep -qw "$NS"; then
            for pid in $(ip netns pids "$NS"); do kill "$pid" 2>/dev/null || true; done
            for _ in $(seq 50); do [ -z "$(ip netns pids "$NS")" ] && break; sleep 0.1; done
        fi
        for rule in "${FORWARD_RULES[@]}"; do
            # shellcheck disable=SC2086
            while iptables -C FORWARD $rule 2>/dev/null; do iptables -D FORWARD $rule; done
        done
        ip route del "$NET" via "$NS_IP" 2>/dev/null || true
        ip route del "$METADATA_IP/32" via "$NS_IP" 2>/dev/null || true
        ip link del "$HOST_IF" 2>/dev/null || true
        ip netns del "$NS" 2>/dev/null || true
        rm -rf "$STATE" "$STATE.lock"
        ;;
    env)
        printf 'INET_DNS=%s\nINET_ALLOWED_IP=%s\nINET_DENIED_IP=%s\nINET_WWW_IP=%s\n' \
            "$DNS_IP" "$ALLOWED_IP" "$DENIED_IP" "$WWW_IP"
        printf 'INET_METADATA_IP=%s\nINET_CERT=%s\n' "$METADATA_IP" "$CERT"
        ;;
    *) die "usage: $0 up|down|env" ;;
esac
