//! One-time codes for the viewer links the host opens.
//!
//! Opening a browser puts the link in a command line, which every user of
//! the machine can read (`/proc/<pid>/cmdline`, `ps`), and a browser it
//! starts keeps it there for its lifetime. So the host asks for a code,
//! opens `#code=<code>`, and the page trades the code for the key once:
//! a code is good for one use within a minute, and worth nothing after.

use computer_protocol::viewer::{VIEWER_CODE_TTL_SECS, VIEWER_KEY_ALPHABET, VIEWER_KEY_LEN};
use parking_lot::Mutex;
use rand::Rng;
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

/// Codes waiting at once; a host opens one tab per few screens, so more
/// waiting means nobody is using them and the oldest go.
const CODES_MAX: usize = 16;
const CODE_TTL: Duration = Duration::from_secs(VIEWER_CODE_TTL_SECS);

#[derive(Debug, Default)]
pub struct LinkCodes {
    waiting: Mutex<VecDeque<(String, Instant)>>,
}

impl LinkCodes {
    /// A new code, good once within [`VIEWER_CODE_TTL_SECS`].
    pub fn issue(&self) -> String {
        let alphabet = VIEWER_KEY_ALPHABET.as_bytes();
        let mut rng = rand::rng();
        let code: String = (0..VIEWER_KEY_LEN)
            .map(|_| alphabet[rng.random_range(0..alphabet.len())] as char)
            .collect();
        let mut waiting = self.waiting.lock();
        waiting.push_back((code.clone(), Instant::now()));
        while waiting.len() > CODES_MAX {
            waiting.pop_front();
        }
        code
    }

    /// Whether `given` is a waiting code; a matching one is used up.
    pub fn redeem(&self, given: &str, now: Instant) -> bool {
        let mut waiting = self.waiting.lock();
        waiting.retain(|(_, issued)| now.saturating_duration_since(*issued) < CODE_TTL);
        // Every code is compared, in constant time each.
        let mut found = None;
        for (at, (code, _)) in waiting.iter().enumerate() {
            if bool::from(code.as_bytes().ct_eq(given.as_bytes())) {
                found = Some(at);
            }
        }
        found.and_then(|at| waiting.remove(at)).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_opens_once_and_only_within_its_minute() {
        let codes = LinkCodes::default();
        let code = codes.issue();
        assert_eq!(code.len(), VIEWER_KEY_LEN);
        let now = Instant::now();
        assert!(!codes.redeem("wrong", now));
        assert!(codes.redeem(&code, now));
        assert!(!codes.redeem(&code, now), "used up");
        let late = codes.issue();
        assert!(!codes.redeem(&late, now + CODE_TTL + Duration::from_secs(1)));
    }

    #[test]
    fn only_the_newest_codes_wait() {
        let codes = LinkCodes::default();
        let first = codes.issue();
        for _ in 0..CODES_MAX {
            codes.issue();
        }
        assert!(!codes.redeem(&first, Instant::now()));
    }
}
