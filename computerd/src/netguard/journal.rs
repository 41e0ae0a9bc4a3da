//! What the guard remembers: the connection log (bounded, newest kept),
//! and which names the computer's lookups gave which addresses, so that a
//! connection to an address can be logged under its name and an allowed
//! name's connection goes where that name really points.

use computer_protocol::network::{NetworkLogEntry, LOG_KEPT};
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::net::Ipv4Addr;
use std::time::{SystemTime, UNIX_EPOCH};

/// Names remembered; the oldest go first.
const NAMES_KEPT: usize = 4096;

#[derive(Default)]
pub struct Journal {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Oldest first, each with its start in milliseconds since the epoch.
    entries: VecDeque<(u64, NetworkLogEntry)>,
    /// Entries dropped so far; the entry at index `i` is number
    /// `dropped + i`, which is how an open connection finds its entry.
    dropped: u64,
    name_of: HashMap<Ipv4Addr, String>,
    addresses_of: HashMap<String, Vec<Ipv4Addr>>,
    /// Names in the order they were learnt, for eviction.
    learnt: VecDeque<String>,
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Journal {
    /// Adds an entry and returns its number, for [`Journal::finish`].
    pub fn record(&self, started_ms: u64, entry: NetworkLogEntry) -> u64 {
        if !entry.allowed {
            tracing::info!("{}", entry.denial_line());
        }
        let mut inner = self.inner.lock();
        if inner.entries.len() == LOG_KEPT {
            inner.entries.pop_front();
            inner.dropped += 1;
        }
        inner.entries.push_back((started_ms, entry));
        inner.dropped + inner.entries.len() as u64 - 1
    }

    /// Fills in a connection's counts (once it ends, or as they stand), if
    /// its entry is still kept: a connection is in the log from its start,
    /// not only its end.
    pub fn finish(&self, number: u64, bytes_out: u64, bytes_in: u64, duration_ms: u64) {
        self.update(number, |entry| {
            entry.bytes_out = bytes_out;
            entry.bytes_in = bytes_in;
            entry.duration_ms = duration_ms;
        });
    }

    /// Fills in the duration of a connection that closed before its counts
    /// are known.
    pub fn finish_duration(&self, number: u64, duration_ms: u64) {
        self.update(number, |entry| entry.duration_ms = duration_ms);
    }

    /// Changes entry `number` (from [`Journal::record`]) if it is still kept.
    fn update(&self, number: u64, change: impl FnOnce(&mut NetworkLogEntry)) {
        let mut inner = self.inner.lock();
        let Some(index) = number.checked_sub(inner.dropped) else {
            return;
        };
        if let Some((_, entry)) = inner.entries.get_mut(index as usize) {
            change(entry);
        }
    }

    /// Newest first.
    pub fn newest(&self, denied_only: bool, limit: usize) -> (Vec<NetworkLogEntry>, u64) {
        let inner = self.inner.lock();
        let entries = inner
            .entries
            .iter()
            .rev()
            .filter(|(_, e)| !denied_only || !e.allowed)
            .take(limit)
            .map(|(_, e)| e.clone())
            .collect();
        (entries, inner.dropped)
    }

    /// Denials that started at or after `since_ms`, oldest first.
    pub fn denials_since(&self, since_ms: u64) -> Vec<NetworkLogEntry> {
        self.started_between(since_ms, u64::MAX)
            .into_iter()
            .filter(|e| !e.allowed)
            .collect()
    }

    /// Every entry that started from `since_ms` to `until_ms`, oldest first.
    pub fn started_between(&self, since_ms: u64, until_ms: u64) -> Vec<NetworkLogEntry> {
        self.inner
            .lock()
            .entries
            .iter()
            .filter(|(at, _)| (since_ms..=until_ms).contains(at))
            .map(|(_, e)| e.clone())
            .collect()
    }

    pub fn learn(&self, name: &str, addresses: &[Ipv4Addr]) {
        if addresses.is_empty() {
            return;
        }
        let mut inner = self.inner.lock();
        for addr in addresses {
            inner.name_of.insert(*addr, name.to_string());
        }
        if inner
            .addresses_of
            .insert(name.to_string(), addresses.to_vec())
            .is_none()
        {
            inner.learnt.push_back(name.to_string());
        }
        while inner.learnt.len() > NAMES_KEPT {
            let Some(old) = inner.learnt.pop_front() else {
                break;
            };
            if let Some(addrs) = inner.addresses_of.remove(&old) {
                for addr in addrs {
                    if inner.name_of.get(&addr) == Some(&old) {
                        inner.name_of.remove(&addr);
                    }
                }
            }
        }
    }

    pub fn name_of(&self, addr: Ipv4Addr) -> Option<String> {
        self.inner.lock().name_of.get(&addr).cloned()
    }

    pub fn addresses_of(&self, name: &str) -> Vec<Ipv4Addr> {
        self.inner
            .lock()
            .addresses_of
            .get(name)
            .cloned()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(allowed: bool, port: u16) -> NetworkLogEntry {
        NetworkLogEntry {
            at: "2026-12-04T00:00:00Z".into(),
            host: None,
            address: "203.0.113.1".into(),
            port,
            allowed,
            rule: "test".into(),
            bytes_out: 0,
            bytes_in: 0,
            duration_ms: 0,
        }
    }

    #[test]
    fn the_log_keeps_the_newest_and_counts_what_it_dropped() {
        let journal = Journal::default();
        for i in 0..LOG_KEPT + 10 {
            journal.record(i as u64, entry(i % 2 == 0, i as u16));
        }
        let (newest, dropped) = journal.newest(false, 3);
        assert_eq!(dropped, 10);
        let ports: Vec<u16> = newest.iter().map(|e| e.port).collect();
        let last = (LOG_KEPT + 9) as u16;
        assert_eq!(ports, vec![last, last - 1, last - 2]);
        let (denied, _) = journal.newest(true, LOG_KEPT);
        assert!(denied.iter().all(|e| !e.allowed));
        assert_eq!(denied.len(), LOG_KEPT / 2);
        let first_kept = journal.record(9_999_999, entry(true, 1));
        journal.finish(first_kept, 10, 20, 30);
        let (newest, _) = journal.newest(false, 1);
        assert_eq!(
            (
                newest[0].bytes_out,
                newest[0].bytes_in,
                newest[0].duration_ms
            ),
            (10, 20, 30)
        );
        journal.finish(0, 1, 1, 1); // long dropped: nothing happens
        let since = journal.denials_since((LOG_KEPT + 5) as u64);
        assert_eq!(since.len(), 3, "2005, 2007 and 2009");
    }

    #[test]
    fn names_map_both_ways_and_the_oldest_are_forgotten() {
        let journal = Journal::default();
        let a = Ipv4Addr::new(203, 0, 113, 10);
        journal.learn("allowed.test", &[a]);
        assert_eq!(journal.name_of(a).as_deref(), Some("allowed.test"));
        assert_eq!(journal.addresses_of("allowed.test"), vec![a]);
        for i in 0..NAMES_KEPT as u32 {
            journal.learn(&format!("n{i}.test"), &[Ipv4Addr::from(0x0a00_0000 + i)]);
        }
        assert!(journal.addresses_of("allowed.test").is_empty());
        assert_eq!(journal.name_of(a), None);
    }
}
