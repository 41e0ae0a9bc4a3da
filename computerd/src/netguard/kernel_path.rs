//! The kernel path: in `open` mode a TCP connection to a public address
//! needs no judgement past its address, so the rules let the kernel
//! forward it (no proxy, no second connection, no copy) and give it a
//! connection mark. The guard logs those connections from the kernel's
//! connection tracking instead of from its proxy: an entry when one
//! appears, its end when it closes, and its byte counters (IP bytes,
//! headers included) when it goes or whenever the log is read.
//!
//! Everything else (contained ranges, host ports, other modes) still
//! passes the proxy, which judges and logs it as before.

use super::conntrack::{self, Event, Flow, Kind};
use super::journal::{now_ms, Journal};
use super::verdict::OPEN_RULE;
use computer_protocol::network::NetworkLogEntry;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The connection mark the rules give what the kernel forwards.
pub const CONNECTION_MARK: u32 = 0x2b1e;
/// Connections followed at once; past this the oldest are forgotten (a
/// lost end event must not grow the map for ever).
const FOLLOWED_MAX: usize = 65_536;

pub struct KernelPath {
    followed: Mutex<HashMap<u32, Followed>>,
}

/// A connection in the log whose counts may still change.
struct Followed {
    number: u64,
    started: Instant,
    ended: Option<Instant>,
}

impl KernelPath {
    /// Subscribes to the connection events and follows them on a thread of
    /// its own; `None` (so the proxy carries everything) where this
    /// namespace does not count bytes or the subscription is refused.
    pub fn start(journal: Arc<Journal>) -> Option<Arc<Self>> {
        if !conntrack::counts_bytes() {
            tracing::info!(
                "connection counters are off in this namespace; every connection passes the proxy"
            );
            return None;
        }
        let mut events = match conntrack::Events::subscribe() {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!(
                    "cannot read connection events ({e}); every connection passes the proxy"
                );
                return None;
            }
        };
        let path = Arc::new(Self {
            followed: Mutex::new(HashMap::new()),
        });
        let following = path.clone();
        let spawned = std::thread::Builder::new()
            .name("conntrack".into())
            .spawn(move || loop {
                match events.next_batch() {
                    Ok(batch) => {
                        for event in batch {
                            following.on_event(&journal, &event, Instant::now());
                        }
                    }
                    Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                        tracing::warn!(
                            "connection events were lost; the next read of the log catches up"
                        );
                    }
                    Err(e) => {
                        tracing::warn!("reading connection events: {e}");
                        std::thread::sleep(Duration::from_millis(100));
                    }
                }
            });
        match spawned {
            Ok(_) => Some(path),
            Err(e) => {
                tracing::warn!(
                    "cannot start the connection reader ({e}); every connection passes the proxy"
                );
                None
            }
        }
    }

    fn on_event(&self, journal: &Journal, event: &Event, now: Instant) {
        let flow = &event.flow;
        if flow.mark != CONNECTION_MARK {
            return;
        }
        let mut followed = self.followed.lock();
        match event.kind {
            Kind::New | Kind::Update => {
                let entry = follow(&mut followed, journal, flow, now);
                if flow.has_ended() && entry.ended.is_none() {
                    entry.ended = Some(now);
                    let duration = ms(now - entry.started);
                    journal.finish_duration(entry.number, duration);
                }
            }
            Kind::Destroy => {
                // Logged now if its start went unseen (events lost), so
                // the log still has every connection.
                follow(&mut followed, journal, flow, now);
                let Some(entry) = followed.remove(&flow.id) else {
                    return;
                };
                let end = entry.ended.unwrap_or(now);
                journal.finish(
                    entry.number,
                    flow.bytes_out.unwrap_or(0),
                    flow.bytes_in.unwrap_or(0),
                    ms(end - entry.started),
                );
            }
        }
    }

    /// Brings the counts of every connection still tracked up to now, logs
    /// any whose start event was lost, and forgets those that are gone.
    /// Called before the log is read.
    pub fn refresh(&self, journal: &Journal) {
        match conntrack::dump_marked(CONNECTION_MARK) {
            Ok(flows) => self.apply_dump(journal, &flows, Instant::now()),
            Err(e) => tracing::warn!("reading the connection table: {e}"),
        }
    }

    fn apply_dump(&self, journal: &Journal, flows: &[Flow], now: Instant) {
        let mut followed = self.followed.lock();
        let mut seen = std::collections::HashSet::new();
        for flow in flows {
            seen.insert(flow.id);
            let entry = follow(&mut followed, journal, flow, now);
            if flow.has_ended() && entry.ended.is_none() {
                entry.ended = Some(now);
            }
            let duration = ms(entry.ended.unwrap_or(now) - entry.started);
            journal.finish(
                entry.number,
                flow.bytes_out.unwrap_or(0),
                flow.bytes_in.unwrap_or(0),
                duration,
            );
        }
        // Gone from the table without an end event (lost): its last counts stay.
        followed.retain(|id, _| seen.contains(id));
    }
}

/// The followed entry of `flow`, logging it first if it is new here.
fn follow<'a>(
    followed: &'a mut HashMap<u32, Followed>,
    journal: &Journal,
    flow: &Flow,
    now: Instant,
) -> &'a mut Followed {
    if !followed.contains_key(&flow.id) && followed.len() >= FOLLOWED_MAX {
        if let Some(oldest) = followed
            .iter()
            .min_by_key(|(_, f)| f.number)
            .map(|(id, _)| *id)
        {
            followed.remove(&oldest);
        }
    }
    followed.entry(flow.id).or_insert_with(|| {
        let (address, port) = flow
            .destination
            .map_or((String::new(), 0), |d| (d.ip().to_string(), d.port()));
        let host = flow.destination.and_then(|d| journal.name_of(*d.ip()));
        let number = journal.record(
            now_ms(),
            NetworkLogEntry {
                at: crate::clock::now_rfc3339(),
                host,
                address,
                port,
                allowed: true,
                rule: OPEN_RULE.into(),
                bytes_out: 0,
                bytes_in: 0,
                duration_ms: 0,
            },
        );
        Followed {
            number,
            started: now,
            ended: None,
        }
    })
}

fn ms(duration: Duration) -> u64 {
    duration.as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn flow(id: u32, state: u8, counts: Option<(u64, u64)>) -> Flow {
        Flow {
            id,
            mark: CONNECTION_MARK,
            protocol: 6,
            destination: Some("203.0.113.7:443".parse().unwrap()),
            tcp_state: Some(state),
            bytes_out: counts.map(|c| c.0),
            bytes_in: counts.map(|c| c.1),
        }
    }

    fn event(kind: Kind, flow: Flow) -> Event {
        Event { kind, flow }
    }

    fn path() -> KernelPath {
        KernelPath {
            followed: Mutex::new(HashMap::new()),
        }
    }

    #[test]
    fn a_connection_is_logged_from_its_start_and_counted_when_it_goes() {
        let journal = Journal::default();
        journal.learn("www.example.test", &[Ipv4Addr::new(203, 0, 113, 7)]);
        let path = path();
        let t0 = Instant::now();
        path.on_event(&journal, &event(Kind::New, flow(5, 1, None)), t0);
        path.on_event(&journal, &event(Kind::Update, flow(5, 3, None)), t0);
        let (entries, _) = journal.newest(false, 10);
        assert_eq!(entries.len(), 1, "one entry per connection, from its start");
        assert_eq!(entries[0].host.as_deref(), Some("www.example.test"));
        assert_eq!(
            (entries[0].address.as_str(), entries[0].port),
            ("203.0.113.7", 443)
        );
        assert!(entries[0].allowed);
        assert_eq!(entries[0].rule, OPEN_RULE);

        let closed = t0 + Duration::from_millis(250);
        path.on_event(
            &journal,
            &event(Kind::Update, flow(5, conntrack::TCP_TIME_WAIT, None)),
            closed,
        );
        // The end event comes long after the close (TIME_WAIT): the
        // duration is the close's.
        let gone = t0 + Duration::from_secs(120);
        path.on_event(
            &journal,
            &event(Kind::Destroy, flow(5, 7, Some((774, 100_736)))),
            gone,
        );
        let (entries, _) = journal.newest(false, 10);
        assert_eq!(
            (
                entries[0].bytes_out,
                entries[0].bytes_in,
                entries[0].duration_ms
            ),
            (774, 100_736, 250)
        );
        assert!(path.followed.lock().is_empty());
    }

    #[test]
    fn a_connection_seen_only_as_it_goes_is_still_logged_with_its_counts() {
        let journal = Journal::default();
        let path = path();
        path.on_event(
            &journal,
            &event(Kind::Destroy, flow(8, 7, Some((60, 900)))),
            Instant::now(),
        );
        let (entries, _) = journal.newest(false, 10);
        assert_eq!(entries.len(), 1);
        assert_eq!((entries[0].bytes_out, entries[0].bytes_in), (60, 900));
        assert!(path.followed.lock().is_empty());
    }

    #[test]
    fn other_marks_are_not_this_paths_connections() {
        let journal = Journal::default();
        let path = path();
        let mut proxied = flow(9, 1, None);
        proxied.mark = 0;
        path.on_event(&journal, &event(Kind::New, proxied), Instant::now());
        assert!(journal.newest(false, 10).0.is_empty());
    }

    #[test]
    fn a_dump_counts_live_connections_logs_missed_ones_and_forgets_the_gone() {
        let journal = Journal::default();
        let path = path();
        let t0 = Instant::now();
        path.on_event(&journal, &event(Kind::New, flow(1, 1, None)), t0);
        path.on_event(&journal, &event(Kind::New, flow(2, 1, None)), t0);
        // Connection 1 is still open; 2 went with its end event lost; 3's
        // start event was lost.
        let later = t0 + Duration::from_millis(400);
        path.apply_dump(
            &journal,
            &[flow(1, 3, Some((100, 5_000))), flow(3, 3, Some((10, 20)))],
            later,
        );
        let (entries, _) = journal.newest(false, 10);
        assert_eq!(entries.len(), 3);
        let by_counts: Vec<(u64, u64, u64)> = entries
            .iter()
            .map(|e| (e.bytes_out, e.bytes_in, e.duration_ms))
            .collect();
        assert_eq!(by_counts, vec![(10, 20, 0), (0, 0, 0), (100, 5_000, 400)]);
        let ids: std::collections::BTreeSet<u32> = path.followed.lock().keys().copied().collect();
        assert_eq!(ids, [1, 3].into());
    }
}
