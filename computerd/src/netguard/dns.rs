//! DNS messages, as far as the guard needs them: the question of a query,
//! answers it makes itself (refused, empty), a query of its own, and the
//! IPv4 addresses of an upstream answer. Pure; `resolver` does the I/O.

use std::net::Ipv4Addr;

pub const TYPE_A: u16 = 1;
pub const TYPE_AAAA: u16 = 28;
const HEADER: usize = 12;

/// The first question of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub id: u16,
    /// Lower case, no trailing dot.
    pub name: String,
    pub qtype: u16,
    /// Where the question ends in the message.
    end: usize,
}

/// Reads a query's id and first question; `None` for anything else.
pub fn question(message: &[u8]) -> Option<Question> {
    if message.len() < HEADER {
        return None;
    }
    let id = u16::from_be_bytes([message[0], message[1]]);
    let is_response = message[2] & 0x80 != 0;
    let questions = u16::from_be_bytes([message[4], message[5]]);
    if is_response || questions == 0 {
        return None;
    }
    let (name, at) = read_name(message, HEADER)?;
    let fixed = message.get(at..at + 4)?;
    Some(Question {
        id,
        name,
        qtype: u16::from_be_bytes([fixed[0], fixed[1]]),
        end: at + 4,
    })
}

/// A name at `at`, following compression pointers (bounded), and where the
/// name's own bytes end.
fn read_name(message: &[u8], mut at: usize) -> Option<(String, usize)> {
    let mut labels: Vec<String> = Vec::new();
    let mut end = None;
    for _ in 0..64 {
        let len = usize::from(*message.get(at)?);
        if len & 0xc0 == 0xc0 {
            let low = usize::from(*message.get(at + 1)?);
            end.get_or_insert(at + 2);
            at = (len & 0x3f) << 8 | low;
            continue;
        }
        if len == 0 {
            let name = labels.join(".").to_ascii_lowercase();
            return (name.len() <= 253).then(|| (name, end.unwrap_or(at + 1)));
        }
        let label = message.get(at + 1..at + 1 + len)?;
        labels.push(String::from_utf8_lossy(label).into_owned());
        at += 1 + len;
    }
    None
}

/// An answer to `query` with no records and `rcode` (0: no error, 3: no
/// such name, 5: refused).
pub fn answer_without_records(query: &[u8], question: &Question, rcode: u8) -> Vec<u8> {
    let mut out = query[..question.end].to_vec();
    // QR, the query's opcode and RD; RA; the code.
    out[2] = 0x80 | (query[2] & 0x79);
    out[3] = 0x80 | (rcode & 0x0f);
    out[4..6].copy_from_slice(&1u16.to_be_bytes());
    out[6..12].fill(0);
    out
}

/// A recursive query of our own for the IPv4 addresses of `name`.
pub fn query_a(id: u16, name: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + name.len() + 6);
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.split('.').filter(|l| !l.is_empty()) {
        let label = &label.as_bytes()[..label.len().min(63)];
        out.push(label.len() as u8);
        out.extend_from_slice(label);
    }
    out.push(0);
    out.extend_from_slice(&TYPE_A.to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes());
    out
}

/// The IPv4 addresses in an answer's answer section.
pub fn a_records(message: &[u8]) -> Vec<Ipv4Addr> {
    let mut found = Vec::new();
    let Some(q) = question_any(message) else {
        return found;
    };
    let answers = u16::from_be_bytes([message[6], message[7]]);
    let mut at = q;
    for _ in 0..answers {
        let Some((_, after_name)) = read_name(message, at) else {
            break;
        };
        let Some(fixed) = message.get(after_name..after_name + 10) else {
            break;
        };
        let rtype = u16::from_be_bytes([fixed[0], fixed[1]]);
        let len = usize::from(u16::from_be_bytes([fixed[8], fixed[9]]));
        let Some(data) = message.get(after_name + 10..after_name + 10 + len) else {
            break;
        };
        if rtype == TYPE_A && len == 4 {
            found.push(Ipv4Addr::new(data[0], data[1], data[2], data[3]));
        }
        at = after_name + 10 + len;
    }
    found
}

/// Where the question section of any message (query or answer) ends.
fn question_any(message: &[u8]) -> Option<usize> {
    if message.len() < HEADER || u16::from_be_bytes([message[4], message[5]]) != 1 {
        return None;
    }
    let (_, at) = read_name(message, HEADER)?;
    (message.len() >= at + 4).then_some(at + 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer to `query_a(id, name)` holding `addrs`, with compressed names.
    fn answer(id: u16, name: &str, addrs: &[Ipv4Addr]) -> Vec<u8> {
        let mut out = query_a(id, name);
        out[2] = 0x81;
        out[3] = 0x80;
        out[6..8].copy_from_slice(&(addrs.len() as u16).to_be_bytes());
        for addr in addrs {
            out.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4]);
            out.extend_from_slice(&addr.octets());
        }
        out
    }

    #[test]
    fn a_query_gives_its_question_and_refusals_echo_it() {
        let query = query_a(0x1234, "Allowed.Test");
        let q = question(&query).unwrap();
        assert_eq!(
            (q.id, q.name.as_str(), q.qtype),
            (0x1234, "allowed.test", TYPE_A)
        );
        let refused = answer_without_records(&query, &q, 5);
        assert_eq!(&refused[..2], &[0x12, 0x34]);
        assert_eq!(refused[2] & 0x80, 0x80, "a response");
        assert_eq!(refused[3] & 0x0f, 5);
        assert_eq!(question(&refused), None, "responses are not questions");
        assert_eq!(question_any(&refused), Some(query.len()));
    }

    #[test]
    fn answers_give_their_addresses() {
        let addrs = [
            Ipv4Addr::new(203, 0, 113, 10),
            Ipv4Addr::new(203, 0, 113, 11),
        ];
        assert_eq!(a_records(&answer(7, "allowed.test", &addrs)), addrs);
        assert!(a_records(&answer(7, "allowed.test", &[])).is_empty());
    }

    #[test]
    fn garbage_and_pointer_loops_are_refused_not_followed() {
        assert_eq!(question(&[0; 5]), None);
        let mut looping = query_a(1, "a.test");
        looping[12] = 0xc0;
        looping[13] = 12;
        assert_eq!(question(&looping), None);
        for len in 0..80 {
            let noise: Vec<u8> = (0..len).map(|i| (i * 91 + 3) as u8).collect();
            let _ = question(&noise);
            let _ = a_records(&noise);
        }
    }
}
