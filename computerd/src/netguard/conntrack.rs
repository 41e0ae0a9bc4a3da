//! The kernel's connection tracking, read over netlink (`ctnetlink`): the
//! events of connections appearing, changing state and going, and a dump
//! of the connections tracked now with their byte counters. Only what the
//! guard needs is decoded: the original direction's destination, the
//! connection's mark and id, its TCP state and its counters.
//!
//! Reading events and dumping both need CAP_NET_ADMIN in the namespace,
//! which the guard holds and the computer does not.

use super::set_socket_option;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

const NFNL_SUBSYS_CTNETLINK: u16 = 1;
const IPCTNL_MSG_CT_NEW: u16 = 0;
const IPCTNL_MSG_CT_GET: u16 = 1;
const IPCTNL_MSG_CT_DELETE: u16 = 2;

const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_DUMP: u16 = 0x300;
/// Set on the event of a connection that is new (with `NLM_F_EXCL`).
const NLM_F_CREATE: u16 = 0x400;

const NLMSG_HEADER: usize = 16;
const NFGENMSG: usize = 4;
const NLA_TYPE_MASK: u16 = 0x3fff;

const CTA_TUPLE_ORIG: u16 = 1;
const CTA_PROTOINFO: u16 = 4;
const CTA_MARK: u16 = 8;
const CTA_COUNTERS_ORIG: u16 = 9;
const CTA_COUNTERS_REPLY: u16 = 10;
const CTA_ID: u16 = 12;
const CTA_MARK_MASK: u16 = 21;
const CTA_TUPLE_IP: u16 = 1;
const CTA_TUPLE_PROTO: u16 = 2;
const CTA_IP_V4_DST: u16 = 2;
const CTA_PROTO_NUM: u16 = 1;
const CTA_PROTO_DST_PORT: u16 = 3;
const CTA_PROTOINFO_TCP: u16 = 1;
const CTA_PROTOINFO_TCP_STATE: u16 = 1;
const CTA_COUNTERS_BYTES: u16 = 2;

/// The multicast groups of new, changed and ended connections.
const GROUPS_NEW_UPDATE_DESTROY: u32 = 0b111;

/// TCP states (`enum tcp_conntrack`) after which no more data flows: both
/// ends closed (`TIME_WAIT`) or one reset it (`CLOSE`).
pub const TCP_TIME_WAIT: u8 = 7;
pub const TCP_CLOSE: u8 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    New,
    Update,
    Destroy,
}

/// One tracked connection as the kernel describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Flow {
    pub id: u32,
    pub mark: u32,
    /// The IP protocol number (6 for TCP).
    pub protocol: u8,
    /// Where the connection was going, as its first packet said.
    pub destination: Option<SocketAddrV4>,
    pub tcp_state: Option<u8>,
    /// IP bytes, headers included, from the opener and back to it; present
    /// only where the namespace counts (`nf_conntrack_acct`), and in events
    /// only when a connection goes.
    pub bytes_out: Option<u64>,
    pub bytes_in: Option<u64>,
}

impl Flow {
    pub fn has_ended(&self) -> bool {
        matches!(self.tcp_state, Some(TCP_TIME_WAIT | TCP_CLOSE))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: Kind,
    pub flow: Flow,
}

/// Whether this namespace counts bytes per connection. Docker sets it for
/// the guard's container (`net.netfilter.nf_conntrack_acct`); a guard made
/// by an older host has no counters, and so no kernel path.
pub fn counts_bytes() -> bool {
    std::fs::read_to_string("/proc/sys/net/netfilter/nf_conntrack_acct")
        .is_ok_and(|text| text.trim() == "1")
}

/// A netlink socket subscribed to connection events.
pub struct Events {
    socket: OwnedFd,
    buffer: Vec<u8>,
}

impl Events {
    pub fn subscribe() -> io::Result<Self> {
        let socket = netlink_socket(GROUPS_NEW_UPDATE_DESTROY)?;
        // A burst of connections must not overflow the queue; forcing the
        // size past the system's default needs CAP_NET_ADMIN, which the
        // guard has. Where refused, the default stays and a lost event is
        // made up for by the next dump.
        let size: libc::c_int = 8 << 20;
        let _ = set_socket_option(&socket, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &size);
        Ok(Self {
            socket,
            buffer: vec![0; 256 * 1024],
        })
    }

    /// Waits for the next batch of events. `ENOBUFS` (events were lost)
    /// comes back as an error; the socket stays usable.
    pub fn next_batch(&mut self) -> io::Result<Vec<Event>> {
        let n = receive(&self.socket, &mut self.buffer)?;
        Ok(parse(&self.buffer[..n]).0)
    }
}

/// Every IPv4 connection tracked now that carries `mark`, with counters.
pub fn dump_marked(mark: u32) -> io::Result<Vec<Flow>> {
    let socket = netlink_socket(0)?;
    let timeout = libc::timeval {
        tv_sec: 1,
        tv_usec: 0,
    };
    // Without it a dump the kernel never ends would hold the log's reader.
    set_socket_option(&socket, libc::SOL_SOCKET, libc::SO_RCVTIMEO, &timeout)?;
    let request = dump_request(mark);
    // SAFETY: sends a buffer owned here to the kernel (the default
    // destination of a netlink socket).
    let sent = unsafe {
        libc::send(
            socket.as_raw_fd(),
            request.as_ptr().cast(),
            request.len(),
            0,
        )
    };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buffer = vec![0; 256 * 1024];
    let mut flows = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    loop {
        let n = receive(&socket, &mut buffer)?;
        let (events, end) = parse(&buffer[..n]);
        flows.extend(
            events
                .into_iter()
                .map(|e| e.flow)
                .filter(|f| f.mark == mark),
        );
        match end {
            Some(End::Done) => return Ok(flows),
            Some(End::Error(code)) => return Err(io::Error::from_raw_os_error(code)),
            None if std::time::Instant::now() > deadline => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the connection table's dump did not end within 2 s",
                ))
            }
            None => {}
        }
    }
}

fn netlink_socket(groups: u32) -> io::Result<OwnedFd> {
    // SAFETY: plain socket creation; the descriptor is owned below.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_NETFILTER,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor owned here alone.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: sockaddr_nl is plain data; zero is a valid start.
    let mut address: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    address.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    address.nl_groups = groups;
    // SAFETY: binds the socket owned here to an address of the length given.
    let rc = unsafe {
        libc::bind(
            socket.as_raw_fd(),
            (&raw const address).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(socket)
}

fn receive(socket: &OwnedFd, buffer: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: receives into a buffer owned by the caller, of its length.
        let n = unsafe {
            libc::recv(
                socket.as_raw_fd(),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                0,
            )
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// A dump request for IPv4 connections whose mark is `mark`.
fn dump_request(mark: u32) -> Vec<u8> {
    let mut message = Vec::with_capacity(NLMSG_HEADER + NFGENMSG + 16);
    let kind = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET;
    message.extend_from_slice(&0u32.to_ne_bytes()); // length, set below
    message.extend_from_slice(&kind.to_ne_bytes());
    message.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    message.extend_from_slice(&1u32.to_ne_bytes()); // sequence
    message.extend_from_slice(&0u32.to_ne_bytes()); // port: the kernel's
    message.extend_from_slice(&[libc::AF_INET as u8, 0, 0, 0]);
    for (kind, value) in [(CTA_MARK, mark), (CTA_MARK_MASK, u32::MAX)] {
        message.extend_from_slice(&8u16.to_ne_bytes());
        message.extend_from_slice(&kind.to_ne_bytes());
        message.extend_from_slice(&value.to_be_bytes());
    }
    let length = message.len() as u32;
    message[..4].copy_from_slice(&length.to_ne_bytes());
    message
}

#[derive(Debug, PartialEq, Eq)]
enum End {
    Done,
    /// An errno the kernel answered with.
    Error(i32),
}

/// The connections described in a netlink buffer, and how a dump ended if
/// it did. Anything malformed ends the reading of that buffer.
fn parse(mut buffer: &[u8]) -> (Vec<Event>, Option<End>) {
    let mut events = Vec::new();
    // The header's length, type and flags, in the host's byte order.
    while let Some(&[l0, l1, l2, l3, k0, k1, f0, f1, ..]) = buffer.get(..NLMSG_HEADER) {
        let length = u32::from_ne_bytes([l0, l1, l2, l3]) as usize;
        let kind = u16::from_ne_bytes([k0, k1]);
        let flags = u16::from_ne_bytes([f0, f1]);
        if length < NLMSG_HEADER || length > buffer.len() {
            break;
        }
        let body = &buffer[NLMSG_HEADER..length];
        match kind {
            NLMSG_DONE => return (events, Some(End::Done)),
            NLMSG_ERROR => {
                let code = match body {
                    &[c0, c1, c2, c3, ..] => i32::from_ne_bytes([c0, c1, c2, c3]),
                    _ => 0,
                };
                if code != 0 {
                    return (events, Some(End::Error(-code)));
                }
            }
            _ if kind >> 8 == NFNL_SUBSYS_CTNETLINK && body.len() >= NFGENMSG => {
                let event_kind = match kind & 0xff {
                    IPCTNL_MSG_CT_DELETE => Some(Kind::Destroy),
                    IPCTNL_MSG_CT_NEW if flags & NLM_F_CREATE != 0 => Some(Kind::New),
                    IPCTNL_MSG_CT_NEW => Some(Kind::Update),
                    _ => None,
                };
                if let Some(kind) = event_kind {
                    events.push(Event {
                        kind,
                        flow: flow(&body[NFGENMSG..]),
                    });
                }
            }
            _ => {}
        }
        buffer = &buffer[align(length).min(buffer.len())..];
    }
    (events, None)
}

fn flow(attributes: &[u8]) -> Flow {
    let mut flow = Flow::default();
    for (kind, value) in Attributes(attributes) {
        match kind {
            CTA_TUPLE_ORIG => (flow.protocol, flow.destination) = original_tuple(value),
            CTA_PROTOINFO => {
                flow.tcp_state = Attributes(value)
                    .find(|(k, _)| *k == CTA_PROTOINFO_TCP)
                    .and_then(|(_, tcp)| {
                        Attributes(tcp).find(|(k, _)| *k == CTA_PROTOINFO_TCP_STATE)
                    })
                    .and_then(|(_, v)| v.first().copied());
            }
            CTA_MARK => flow.mark = be32(value).unwrap_or(0),
            CTA_ID => flow.id = be32(value).unwrap_or(0),
            CTA_COUNTERS_ORIG => flow.bytes_out = counter_bytes(value),
            CTA_COUNTERS_REPLY => flow.bytes_in = counter_bytes(value),
            _ => {}
        }
    }
    flow
}

/// The protocol and destination of a connection's original direction.
fn original_tuple(tuple: &[u8]) -> (u8, Option<SocketAddrV4>) {
    let mut protocol = 0;
    let mut ip = None;
    let mut port = None;
    for (kind, value) in Attributes(tuple) {
        match kind {
            CTA_TUPLE_IP => {
                ip = Attributes(value)
                    .find(|(k, _)| *k == CTA_IP_V4_DST)
                    .and_then(|(_, v)| <[u8; 4]>::try_from(v).ok())
                    .map(Ipv4Addr::from);
            }
            CTA_TUPLE_PROTO => {
                for (kind, value) in Attributes(value) {
                    match kind {
                        CTA_PROTO_NUM => protocol = value.first().copied().unwrap_or(0),
                        CTA_PROTO_DST_PORT => port = be16(value),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    (
        protocol,
        ip.zip(port).map(|(ip, port)| SocketAddrV4::new(ip, port)),
    )
}

fn counter_bytes(nested: &[u8]) -> Option<u64> {
    Attributes(nested)
        .find(|(k, _)| *k == CTA_COUNTERS_BYTES)
        .and_then(|(_, v)| <[u8; 8]>::try_from(v).ok())
        .map(u64::from_be_bytes)
}

fn be16(value: &[u8]) -> Option<u16> {
    <[u8; 2]>::try_from(value).ok().map(u16::from_be_bytes)
}

fn be32(value: &[u8]) -> Option<u32> {
    <[u8; 4]>::try_from(value).ok().map(u32::from_be_bytes)
}

fn align(length: usize) -> usize {
    (length + 3) & !3
}

/// The attributes (`nlattr`) in a buffer, as (type, value); a malformed
/// one ends the walk.
struct Attributes<'a>(&'a [u8]);

impl<'a> Iterator for Attributes<'a> {
    type Item = (u16, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let header = self.0.get(..4)?;
        let length = u16::from_ne_bytes([header[0], header[1]]) as usize;
        let kind = u16::from_ne_bytes([header[2], header[3]]) & NLA_TYPE_MASK;
        if length < 4 || length > self.0.len() {
            self.0 = &[];
            return None;
        }
        let value = &self.0[4..length];
        self.0 = &self.0[align(length).min(self.0.len())..];
        Some((kind, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds netlink messages the way the kernel lays them out.
    fn attribute(kind: u16, value: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&((4 + value.len()) as u16).to_ne_bytes());
        out.extend_from_slice(&kind.to_ne_bytes());
        out.extend_from_slice(value);
        while out.len() % 4 != 0 {
            out.push(0);
        }
        out
    }

    fn nested(kind: u16, parts: &[Vec<u8>]) -> Vec<u8> {
        attribute(kind | 0x8000, &parts.concat())
    }

    fn message(kind: u16, flags: u16, attributes: &[Vec<u8>]) -> Vec<u8> {
        let body = attributes.concat();
        let mut out = Vec::new();
        out.extend_from_slice(&((NLMSG_HEADER + NFGENMSG + body.len()) as u32).to_ne_bytes());
        out.extend_from_slice(&kind.to_ne_bytes());
        out.extend_from_slice(&flags.to_ne_bytes());
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&[2, 0, 0, 0]);
        out.extend_from_slice(&body);
        out
    }

    fn connection(
        message_kind: u16,
        flags: u16,
        state: u8,
        counters: Option<(u64, u64)>,
    ) -> Vec<u8> {
        let tuple = nested(
            CTA_TUPLE_ORIG,
            &[
                nested(
                    CTA_TUPLE_IP,
                    &[
                        attribute(1, &[172, 17, 0, 2]),
                        attribute(CTA_IP_V4_DST, &[203, 0, 113, 7]),
                    ],
                ),
                nested(
                    CTA_TUPLE_PROTO,
                    &[
                        attribute(CTA_PROTO_NUM, &[6]),
                        attribute(2, &40000u16.to_be_bytes()),
                        attribute(CTA_PROTO_DST_PORT, &443u16.to_be_bytes()),
                    ],
                ),
            ],
        );
        let mut attributes = vec![
            tuple,
            nested(
                CTA_PROTOINFO,
                &[nested(
                    CTA_PROTOINFO_TCP,
                    &[attribute(CTA_PROTOINFO_TCP_STATE, &[state])],
                )],
            ),
            attribute(CTA_MARK, &0x2b1eu32.to_be_bytes()),
            attribute(CTA_ID, &77u32.to_be_bytes()),
        ];
        if let Some((out, inn)) = counters {
            for (kind, bytes) in [(CTA_COUNTERS_ORIG, out), (CTA_COUNTERS_REPLY, inn)] {
                attributes.push(nested(
                    kind,
                    &[
                        attribute(1, &3u64.to_be_bytes()),
                        attribute(CTA_COUNTERS_BYTES, &bytes.to_be_bytes()),
                    ],
                ));
            }
        }
        message(
            (NFNL_SUBSYS_CTNETLINK << 8) | message_kind,
            flags,
            &attributes,
        )
    }

    #[test]
    fn events_say_what_happened_to_which_connection() {
        let buffer = [
            connection(IPCTNL_MSG_CT_NEW, NLM_F_CREATE | 0x200, 1, None),
            connection(IPCTNL_MSG_CT_NEW, 0, TCP_TIME_WAIT, None),
            connection(IPCTNL_MSG_CT_DELETE, 0, TCP_TIME_WAIT, Some((774, 100_736))),
        ]
        .concat();
        let (events, end) = parse(&buffer);
        assert_eq!(end, None);
        let kinds: Vec<Kind> = events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, vec![Kind::New, Kind::Update, Kind::Destroy]);
        let first = &events[0].flow;
        assert_eq!(first.id, 77);
        assert_eq!(first.mark, 0x2b1e);
        assert_eq!(first.protocol, 6);
        assert_eq!(first.destination, Some("203.0.113.7:443".parse().unwrap()));
        assert_eq!(first.tcp_state, Some(1));
        assert!(!first.has_ended());
        assert!(events[1].flow.has_ended());
        assert_eq!(
            (events[2].flow.bytes_out, events[2].flow.bytes_in),
            (Some(774), Some(100_736))
        );
    }

    #[test]
    fn a_dump_ends_with_done_or_the_kernels_error() {
        let mut done = connection(IPCTNL_MSG_CT_NEW, 0x2, 3, Some((1, 2)));
        done.extend_from_slice(&message(NLMSG_DONE, 0x2, &[]));
        let (flows, end) = parse(&done);
        assert_eq!((flows.len(), end), (1, Some(End::Done)));

        let mut error = message(NLMSG_ERROR, 0, &[]);
        error[NLMSG_HEADER..NLMSG_HEADER + 4].copy_from_slice(&(-1i32).to_ne_bytes());
        assert_eq!(parse(&error).1, Some(End::Error(1)));
    }

    #[test]
    fn malformed_input_ends_the_reading_without_a_panic() {
        let whole = connection(IPCTNL_MSG_CT_NEW, NLM_F_CREATE, 1, None);
        for cut in 0..whole.len() {
            let _ = parse(&whole[..cut]);
        }
        let mut lying = whole.clone();
        lying[0..4].copy_from_slice(&9999u32.to_ne_bytes());
        assert!(parse(&lying).0.is_empty());
        // An attribute whose length runs past its message.
        let mut bad_attribute = whole;
        bad_attribute[NLMSG_HEADER + NFGENMSG] = 0xff;
        let (events, _) = parse(&bad_attribute);
        assert_eq!(events[0].flow.destination, None);
    }

    #[test]
    fn the_dump_request_asks_for_ipv4_connections_with_the_mark() {
        let request = dump_request(0x2b1e);
        assert_eq!(
            u32::from_ne_bytes(request[0..4].try_into().unwrap()) as usize,
            request.len()
        );
        assert_eq!(u16::from_ne_bytes(request[4..6].try_into().unwrap()), 0x101);
        assert_eq!(request[NLMSG_HEADER], libc::AF_INET as u8);
        let attributes: Vec<(u16, Vec<u8>)> = Attributes(&request[NLMSG_HEADER + NFGENMSG..])
            .map(|(k, v)| (k, v.to_vec()))
            .collect();
        assert_eq!(
            attributes,
            vec![
                (CTA_MARK, 0x2b1eu32.to_be_bytes().to_vec()),
                (CTA_MARK_MASK, vec![0xff; 4])
            ]
        );
    }
}
