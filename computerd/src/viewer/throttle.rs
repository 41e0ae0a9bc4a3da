//! Throttling wrong viewer keys, so the key cannot be guessed.
//!
//! The key is 8 characters of a 32-letter alphabet (2^40 keys), because it
//! is also the screens' VNC password and VncAuth reads no more than 8. That
//! is plenty against guesses only when guesses are slow: any web page the
//! person opens can send requests to the viewer on 127.0.0.1 and tell a
//! right key from a wrong one by the status (an `<img>`'s `onerror`).
//!
//! So wrong keys are counted over a sliding window, per client address and
//! in total. Past either limit the viewer answers 429 with `Retry-After`
//! for every key, right or wrong, until the oldest counted wrong key leaves
//! the window: an answer that depended on the key would leak it. In total
//! at most [`WRONG_KEYS_IN_TOTAL`] guesses a minute go through, 43 200 a
//! day: covering the key space takes about 70 000 years.
//!
//! Clients behind one address share a budget. In the container every
//! connection through Docker's published port comes from the same gateway
//! address, so there the per-client limit is the limit for all browsers of
//! the host; natively, everything comes from loopback. A person locked out
//! by a page waits at most one window.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Wrong keys one client address may send within [`WRONG_KEY_WINDOW`]. A
/// person mistyping a key or opening an old link a few times stays far
/// below it.
pub const WRONG_KEYS_PER_CLIENT: usize = 10;
/// Wrong keys all clients together may send within [`WRONG_KEY_WINDOW`].
pub const WRONG_KEYS_IN_TOTAL: usize = 30;
/// How long a wrong key counts.
pub const WRONG_KEY_WINDOW: Duration = Duration::from_secs(60);

/// Which limit refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// This client address sent too many wrong keys.
    Client,
    /// All clients together did.
    Everyone,
}

/// A refusal for too many wrong keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttled {
    pub scope: Scope,
    /// The limit that was reached.
    pub limit: usize,
    pub window: Duration,
    /// Until the oldest counted wrong key leaves the window.
    pub retry_after: Duration,
}

/// What a key check came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Right,
    Wrong,
    Throttled(Throttled),
}

/// The wrong keys of the last window.
#[derive(Debug)]
pub struct KeyThrottle {
    per_client: usize,
    in_total: usize,
    window: Duration,
    wrong: Mutex<WrongKeys>,
}

#[derive(Debug, Default)]
struct WrongKeys {
    /// Every counted wrong key, oldest first.
    all: VecDeque<Instant>,
    /// The same, by client address. Holds at most `in_total` times, since
    /// nothing is counted past the total limit.
    by_client: HashMap<IpAddr, VecDeque<Instant>>,
}

impl Default for KeyThrottle {
    fn default() -> KeyThrottle {
        KeyThrottle::new(WRONG_KEYS_PER_CLIENT, WRONG_KEYS_IN_TOTAL, WRONG_KEY_WINDOW)
    }
}

impl KeyThrottle {
    pub fn new(per_client: usize, in_total: usize, window: Duration) -> KeyThrottle {
        KeyThrottle {
            per_client,
            in_total,
            window,
            wrong: Mutex::default(),
        }
    }

    /// Decides a key check by `client` at `now` whose key was `right`:
    /// throttled clients are refused whatever their key, wrong keys count.
    pub fn check(&self, client: IpAddr, now: Instant, right: bool) -> Outcome {
        let client = client.to_canonical();
        let mut wrong = self.wrong.lock();
        wrong.forget_before(now.checked_sub(self.window));
        let mine = wrong.by_client.get(&client).map_or(0, VecDeque::len);
        let throttled = |scope, limit, oldest: Option<&Instant>| {
            Outcome::Throttled(Throttled {
                scope,
                limit,
                window: self.window,
                retry_after: oldest.map_or(Duration::ZERO, |t| {
                    (*t + self.window).saturating_duration_since(now)
                }),
            })
        };
        if mine >= self.per_client {
            let oldest = wrong.by_client.get(&client).and_then(|times| times.front());
            return throttled(Scope::Client, self.per_client, oldest);
        }
        if wrong.all.len() >= self.in_total {
            return throttled(Scope::Everyone, self.in_total, wrong.all.front());
        }
        if right {
            return Outcome::Right;
        }
        wrong.all.push_back(now);
        wrong.by_client.entry(client).or_default().push_back(now);
        Outcome::Wrong
    }
}

impl WrongKeys {
    /// Drops the wrong keys from before `start`.
    fn forget_before(&mut self, start: Option<Instant>) {
        let Some(start) = start else {
            return;
        };
        let old = |times: &mut VecDeque<Instant>| {
            while times.front().is_some_and(|t| *t <= start) {
                times.pop_front();
            }
        };
        old(&mut self.all);
        self.by_client.retain(|_, times| {
            old(times);
            !times.is_empty()
        });
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
    fn a_client_past_its_limit_is_refused_even_with_the_right_key() {
        let throttle = KeyThrottle::new(3, 10, Duration::from_secs(60));
        let start = Instant::now();
        for n in 0..3 {
            let at = start + Duration::from_secs(n);
            assert_eq!(throttle.check(A, at, false), Outcome::Wrong);
        }
        let later = start + Duration::from_secs(10);
        let refused = throttled(throttle.check(A, later, true));
        assert_eq!(refused.scope, Scope::Client);
        assert_eq!(refused.limit, 3);
        // The first wrong key, at 0 s, counts until 60 s.
        assert_eq!(refused.retry_after, Duration::from_secs(50));
        // Another client is not held up.
        assert_eq!(throttle.check(B, later, true), Outcome::Right);
        // Once the first wrong key left the window, one more try is allowed.
        let after = start + Duration::from_millis(60_500);
        assert_eq!(throttle.check(A, after, true), Outcome::Right);
        assert_eq!(throttle.check(A, after, false), Outcome::Wrong);
        assert!(matches!(
            throttle.check(A, after, true),
            Outcome::Throttled(_)
        ));
    }

    #[test]
    fn past_the_total_every_client_is_refused() {
        let throttle = KeyThrottle::new(3, 5, Duration::from_secs(60));
        let start = Instant::now();
        for n in 0..5u8 {
            let client = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, n));
            assert_eq!(throttle.check(client, start, false), Outcome::Wrong);
        }
        let refused = throttled(throttle.check(B, start, true));
        assert_eq!(refused.scope, Scope::Everyone);
        assert_eq!(refused.limit, 5);
        assert_eq!(refused.retry_after, Duration::from_secs(60));
        let after = start + Duration::from_secs(60);
        assert_eq!(throttle.check(B, after, true), Outcome::Right);
    }

    #[test]
    fn ipv4_mapped_addresses_are_the_same_client() {
        let throttle = KeyThrottle::new(1, 10, Duration::from_secs(60));
        let now = Instant::now();
        assert_eq!(throttle.check(A, now, false), Outcome::Wrong);
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert!(matches!(
            throttle.check(mapped, now, true),
            Outcome::Throttled(_)
        ));
    }
}
