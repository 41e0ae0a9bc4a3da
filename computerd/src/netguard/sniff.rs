//! What a connection's first bytes say about where it goes: the `Host` of
//! an HTTP request, the server name (SNI) of a TLS ClientHello. Pure; the
//! proxy reads until [`sniff`] stops asking for more.

/// The most the proxy reads before deciding: a request head or a
/// ClientHello larger than this is refused as unreadable.
pub const SNIFF_MAX: usize = 16 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sniffed {
    /// Not enough bytes yet.
    More,
    /// An HTTP request to this host (lower case, no port).
    Http { host: String },
    /// A TLS ClientHello naming this server.
    Tls { server_name: String },
    /// HTTP without `Host`, TLS without SNI, or neither.
    Unknown,
}

/// Looks at the bytes a client sent first.
pub fn sniff(bytes: &[u8]) -> Sniffed {
    match bytes.first() {
        None => Sniffed::More,
        Some(0x16) => tls_server_name(bytes),
        Some(b) if b.is_ascii_uppercase() => http_host(bytes),
        Some(_) => Sniffed::Unknown,
    }
}

fn http_host(bytes: &[u8]) -> Sniffed {
    let Some(end) = find(bytes, b"\r\n\r\n") else {
        return if bytes.len() >= SNIFF_MAX {
            Sniffed::Unknown
        } else {
            Sniffed::More
        };
    };
    let head = String::from_utf8_lossy(&bytes[..end]);
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    // A proxy-style absolute URI names the host too; `Host` must agree.
    let target = request_line.split(' ').nth(1).unwrap_or("");
    let from_uri = target
        .strip_prefix("http://")
        .map(|rest| rest.split(['/', '?']).next().unwrap_or(""))
        .map(strip_port);
    let from_header = lines.find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("host")
            .then(|| strip_port(value.trim()))
    });
    match (from_uri, from_header) {
        (Some(a), Some(b)) if a != b => Sniffed::Unknown,
        (_, Some(host)) | (Some(host), None) if !host.is_empty() => Sniffed::Http { host },
        _ => Sniffed::Unknown,
    }
}

fn strip_port(host: &str) -> String {
    let host = host.trim().trim_end_matches('.');
    let host = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':')
            .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
            .map_or(host, |(name, _)| name)
    };
    host.to_ascii_lowercase()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The SNI of a ClientHello that may span several TLS records.
fn tls_server_name(bytes: &[u8]) -> Sniffed {
    // The handshake message, gathered from the records that carry it.
    let mut handshake = Vec::new();
    let mut at = 0;
    loop {
        let Some(header) = bytes.get(at..at + 5) else {
            return more_or_unknown(bytes);
        };
        if header[0] != 0x16 {
            return Sniffed::Unknown;
        }
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        let Some(body) = bytes.get(at + 5..at + 5 + len) else {
            return more_or_unknown(bytes);
        };
        handshake.extend_from_slice(body);
        at += 5 + len;
        if handshake.len() >= 4 {
            let need = 4
                + (usize::from(handshake[1]) << 16
                    | usize::from(handshake[2]) << 8
                    | usize::from(handshake[3]));
            if handshake[0] != 1 {
                return Sniffed::Unknown;
            }
            if handshake.len() >= need {
                return client_hello_sni(&handshake[4..need]);
            }
        }
    }
}

fn more_or_unknown(bytes: &[u8]) -> Sniffed {
    if bytes.len() >= SNIFF_MAX {
        Sniffed::Unknown
    } else {
        Sniffed::More
    }
}

/// A small cursor over a ClientHello; every read is checked.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<usize> {
        self.take(1).map(|b| usize::from(b[0]))
    }
    fn u16(&mut self) -> Option<usize> {
        self.take(2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
    }
}

fn client_hello_sni(hello: &[u8]) -> Sniffed {
    let found = (|| {
        let mut r = Reader(hello);
        r.take(2 + 32)?; // version, random
        let session = r.u8()?;
        r.take(session)?;
        let suites = r.u16()?;
        r.take(suites)?;
        let compression = r.u8()?;
        r.take(compression)?;
        let ext_len = r.u16()?;
        let mut exts = Reader(r.take(ext_len)?);
        while !exts.0.is_empty() {
            let kind = exts.u16()?;
            let len = exts.u16()?;
            let body = exts.take(len)?;
            if kind != 0 {
                continue;
            }
            let mut list = Reader(body);
            let list_len = list.u16()?;
            let mut names = Reader(list.take(list_len)?);
            while !names.0.is_empty() {
                let name_type = names.u8()?;
                let len = names.u16()?;
                let name = names.take(len)?;
                if name_type == 0 {
                    return Some(String::from_utf8_lossy(name).to_ascii_lowercase());
                }
            }
        }
        None
    })();
    match found {
        Some(server_name) if !server_name.is_empty() => Sniffed::Tls {
            server_name: server_name.trim_end_matches('.').to_string(),
        },
        _ => Sniffed::Unknown,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal ClientHello naming `name` (or none), in one record.
    pub(crate) fn client_hello(name: Option<&str>) -> Vec<u8> {
        let mut exts = Vec::new();
        if let Some(name) = name {
            let entry_len = 3 + name.len();
            exts.extend_from_slice(&0u16.to_be_bytes());
            exts.extend_from_slice(&((entry_len + 2) as u16).to_be_bytes());
            exts.extend_from_slice(&(entry_len as u16).to_be_bytes());
            exts.push(0);
            exts.extend_from_slice(&(name.len() as u16).to_be_bytes());
            exts.extend_from_slice(name.as_bytes());
        }
        // An unrelated extension first, as real hellos have.
        let mut all = vec![0x00, 0x0b, 0x00, 0x02, 0x01, 0x00];
        all.extend_from_slice(&exts);
        let mut hello = vec![3, 3];
        hello.extend_from_slice(&[7; 32]);
        hello.extend_from_slice(&[0, 0, 2, 0x13, 0x01, 1, 0]);
        hello.extend_from_slice(&(all.len() as u16).to_be_bytes());
        hello.extend_from_slice(&all);
        let mut handshake = vec![1, 0, (hello.len() >> 8) as u8, hello.len() as u8];
        handshake.extend_from_slice(&hello);
        let mut record = vec![0x16, 3, 1];
        record.extend_from_slice(&(handshake.len() as u16).to_be_bytes());
        record.extend_from_slice(&handshake);
        record
    }

    #[test]
    fn http_requests_give_their_host() {
        let get = b"GET /x HTTP/1.1\r\nUser-Agent: t\r\nHOST: Allowed.Test:8080\r\n\r\n";
        assert_eq!(
            sniff(get),
            Sniffed::Http {
                host: "allowed.test".into()
            }
        );
        assert_eq!(sniff(&get[..20]), Sniffed::More);
        let absolute = b"GET http://denied.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n";
        assert_eq!(
            sniff(absolute),
            Sniffed::Unknown,
            "a URI and a Host that disagree"
        );
        let no_host = b"GET / HTTP/1.0\r\n\r\n";
        assert_eq!(sniff(no_host), Sniffed::Unknown);
        let v6 = b"GET / HTTP/1.1\r\nHost: [2001:db8::1]:80\r\n\r\n";
        assert_eq!(
            sniff(v6),
            Sniffed::Http {
                host: "2001:db8::1".into()
            }
        );
    }

    #[test]
    fn client_hellos_give_their_server_name_even_split_across_records() {
        let hello = client_hello(Some("WWW.allowed.test"));
        assert_eq!(
            sniff(&hello),
            Sniffed::Tls {
                server_name: "www.allowed.test".into()
            }
        );
        for cut in [1, 5, 40, hello.len() - 1] {
            assert_eq!(sniff(&hello[..cut]), Sniffed::More, "cut at {cut}");
        }
        assert_eq!(sniff(&client_hello(None)), Sniffed::Unknown);
        // The same handshake in two records.
        let handshake = &hello[5..];
        let (a, b) = handshake.split_at(30);
        let mut split = vec![0x16, 3, 1, 0, a.len() as u8];
        split.extend_from_slice(a);
        split.extend_from_slice(&[0x16, 3, 1, (b.len() >> 8) as u8, b.len() as u8]);
        split.extend_from_slice(b);
        assert_eq!(
            sniff(&split),
            Sniffed::Tls {
                server_name: "www.allowed.test".into()
            }
        );
    }

    #[test]
    fn other_protocols_and_garbage_are_unknown_never_a_panic() {
        assert_eq!(
            sniff(b"SSH-2.0-OpenSSH\r\n"),
            Sniffed::More,
            "upper case: could be HTTP"
        );
        assert_eq!(sniff(&[0u8; 64]), Sniffed::Unknown);
        let mut lying = client_hello(Some("a.test"));
        lying[60] = 0xff;
        let _ = sniff(&lying);
        for len in 0..200 {
            let noise: Vec<u8> = (0..len).map(|i| (i * 37 + 0x16) as u8).collect();
            let _ = sniff(&noise);
        }
        assert_eq!(sniff(&vec![b'G'; SNIFF_MAX]), Sniffed::Unknown);
    }
}
