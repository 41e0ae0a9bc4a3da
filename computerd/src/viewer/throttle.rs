//! Slowing a client that sends wrong viewer keys.
//!
//! The key is 32 characters of a 32-letter alphabet (160 bits): no rate of
//! guessing finds it, so a right key is always let in, whoever else is
//! guessing. That matters: a budget shared by everyone, or by one address,
//! lets anyone who can send requests to the viewer lock the person out
//! (every browser of the host comes in from one address through Docker's
//! published port). What is left to limit is noise: past
//! [`WRONG_KEYS_PER_CLIENT`] wrong keys within [`WRONG_KEY_WINDOW`], a
//! client's wrong keys get 429 with `Retry-After` instead of 403, so a page
//! that probes the viewer in a loop is told to wait. A request without a key
//! is not a guess and is not counted.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Wrong keys one client address may send within [`WRONG_KEY_WINDOW`]
/// before its wrong keys are answered 429.
pub const WRONG_KEYS_PER_CLIENT: usize = 10;
/// How long a wrong key counts.
pub const WRONG_KEY_WINDOW: Duration = Duration::from_secs(60);
/// Client addresses remembered at once; past this the oldest is forgotten,
/// so a flood from many addresses cannot grow the table.
const CLIENTS_MAX: usize = 4096;

/// A client told to wait for sending too many wrong keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttled {
    /// The limit that was reached.
    pub limit: usize,
    pub window: Duration,
    /// Until the client's oldest counted wrong key leaves the window.
    pub retry_after: Duration,
}

/// What a key check came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Right,
    Wrong,
    /// A wrong key from a client past its limit.
    Throttled(Throttled),
}

/// The wrong keys of the last window, by client address.
#[derive(Debug)]
pub struct KeyThrottle {
    per_client: usize,
    window: Duration,
    wrong: Mutex<HashMap<IpAddr, VecDeque<Instant>>>,
}

impl Default for KeyThrottle {
    fn default() -> KeyThrottle {
        KeyThrottle::new(WRONG_KEYS_PER_CLIENT, WRONG_KEY_WINDOW)
    }
}

impl KeyThrottle {
    pub fn new(per_client: usize, window: Duration) -> KeyThrottle {
        KeyThrottle {
            per_client,
            window,
            wrong: Mutex::default(),
        }
    }

    /// Decides a key check by `client` at `now`: a right key passes; a
    /// wrong one counts, and past the client's limit is told to wait.
    pub fn check(&self, client: IpAddr, now: Instant, right: bool) -> Outcome {
        if right {
            return Outcome::Right;
        }
        let client = client.to_canonical();
        let mut wrong = self.wrong.lock();
        if let Some(start) = now.checked_sub(self.window) {
            wrong.retain(|_, times| {
                while times.front().is_some_and(|t| *t <= start) {
                    times.pop_front();
                }
                !times.is_empty()
            });
        }
        if !wrong.contains_key(&client) && wrong.len() >= CLIENTS_MAX {
            let oldest = wrong
                .iter()
                .min_by_key(|(_, times)| times.back().copied())
                .map(|(ip, _)| *ip);
            if let Some(oldest) = oldest {
                wrong.remove(&oldest);
            }
        }
        let times = wrong.entry(client).or_default();
        if times.len() >= self.per_client {
            let retry_after = times.front().map_or(Duration::ZERO, |t| {
                (*t + self.window).saturating_duration_since(now)
            });
            return Outcome::Throttled(Throttled {
                limit: self.per_client,
                window: self.window,
                retry_after,
            });
        }
        times.push_back(now);
        Outcome::Wrong
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));

    fn throttled(outcome: Outcome) -> Throttled {
        match outcome {
            Outcome::Throttled(t) => t,
            other => panic!("not throttled: {other:?}"),
        }
    }

    #[test]
    fn a_right_key_passes_however_many_wrong_ones_came_first() {
        let throttle = KeyThrottle::new(3, Duration::from_secs(60));
        let start = Instant::now();
        for n in 0..40u8 {
            let client = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, n % 4));
            let _ = throttle.check(client, start, false);
            let _ = throttle.check(A, start, false);
        }
        assert_eq!(throttle.check(A, start, true), Outcome::Right);
        assert_eq!(throttle.check(B, start, true), Outcome::Right);
    }

    #[test]
    fn a_client_past_its_limit_is_told_to_wait() {
        let throttle = KeyThrottle::new(3, Duration::from_secs(60));
        let start = Instant::now();
        for n in 0..3 {
            let at = start + Duration::from_secs(n);
            assert_eq!(throttle.check(A, at, false), Outcome::Wrong);
        }
        let later = start + Duration::from_secs(10);
        let refused = throttled(throttle.check(A, later, false));
        assert_eq!(refused.limit, 3);
        // The first wrong key, at 0 s, counts until 60 s.
        assert_eq!(refused.retry_after, Duration::from_secs(50));
        // Another client is not held up.
        assert_eq!(throttle.check(B, later, false), Outcome::Wrong);
        // Once the first wrong key left the window, one more is counted.
        let after = start + Duration::from_millis(60_500);
        assert_eq!(throttle.check(A, after, false), Outcome::Wrong);
        assert!(matches!(
            throttle.check(A, after, false),
            Outcome::Throttled(_)
        ));
    }

    #[test]
    fn ipv4_mapped_addresses_are_the_same_client() {
        let throttle = KeyThrottle::new(1, Duration::from_secs(60));
        let now = Instant::now();
        assert_eq!(throttle.check(A, now, false), Outcome::Wrong);
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert!(matches!(
            throttle.check(mapped, now, false),
            Outcome::Throttled(_)
        ));
    }

    #[test]
    fn the_table_of_clients_stays_bounded() {
        let throttle = KeyThrottle::new(3, Duration::from_secs(60));
        let now = Instant::now();
        for n in 0..(CLIENTS_MAX as u32 + 100) {
            let client = IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + n));
            let _ = throttle.check(client, now, false);
        }
        assert!(throttle.wrong.lock().len() <= CLIENTS_MAX);
    }
}
