//! How long typing a text will wait before rebinding keycodes, worked out
//! before any key goes out, so a text that would hold the screen for
//! minutes is refused at once instead.
//!
//! Characters no key has are typed through spare keycodes bound to them.
//! Once every spare keycode is bound, the one unused longest is rebound,
//! but only a catch-up time (the keyboard's `CLIENT_CATCH_UP`) after its
//! last use. So a text with many distinct such characters types about one
//! batch of spare keycodes per catch-up time.

use super::keysyms::Keysym;
use std::time::Duration;

/// The longest one `type` action may wait for rebinding: well inside the
/// host's 30 s deadline for a call, with room for the other actions.
pub const REBINDING_WAIT_MAX: Duration = Duration::from_secs(10);

/// A keycode bound for typing now: its keysym and how long ago it was last
/// used.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    pub keysym: Keysym,
    pub unused_for: Duration,
}

/// The time typing `keysyms` spends waiting to rebind keycodes, with
/// `spare` unbound keycodes and `bound` ones, each rebound `catch_up` after
/// its last use, where `on_a_key` tells the keysyms a key of the keymap
/// has. Typing itself is taken as instant, so this is a floor.
pub fn rebinding_wait(
    keysyms: &[Keysym],
    on_a_key: impl Fn(Keysym) -> bool,
    spare: usize,
    bound: &[Bound],
    catch_up: Duration,
) -> Duration {
    // Seconds from now. Each binding keeps when it was last used (before
    // now for the ones bound already); it may be rebound `catch_up` after.
    let catch_up = catch_up.as_secs_f64();
    let mut used_at: Vec<(Keysym, f64)> = bound
        .iter()
        .map(|b| (b.keysym, -b.unused_for.as_secs_f64()))
        .collect();
    let mut free = spare;
    let mut now = 0.0_f64;
    for &keysym in keysyms {
        if let Some(entry) = used_at.iter_mut().find(|(k, _)| *k == keysym) {
            entry.1 = now;
            continue;
        }
        if on_a_key(keysym) {
            continue;
        }
        if free > 0 {
            free -= 1;
            used_at.push((keysym, now));
            continue;
        }
        let Some(oldest) =
            (0..used_at.len()).min_by(|&a, &b| used_at[a].1.total_cmp(&used_at[b].1))
        else {
            // No keycode to bind at all: typing fails at once, it does
            // not wait.
            return Duration::ZERO;
        };
        now = now.max(used_at[oldest].1 + catch_up);
        used_at[oldest] = (keysym, now);
    }
    Duration::from_secs_f64(now.max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CJK: Keysym = 0x100_4e00;
    const CLIENT_CATCH_UP: Duration = Duration::from_millis(500);

    fn cjk(n: u32) -> Vec<Keysym> {
        (0..n).map(|i| CJK + i).collect()
    }

    fn ascii(k: Keysym) -> bool {
        k < 0x100
    }

    #[test]
    fn text_on_the_keys_or_within_the_spares_waits_nothing() {
        let text: Vec<Keysym> = "hello".bytes().map(Keysym::from).collect();
        assert_eq!(
            rebinding_wait(&text, ascii, 0, &[], CLIENT_CATCH_UP),
            Duration::ZERO
        );
        assert_eq!(
            rebinding_wait(&cjk(19), ascii, 19, &[], CLIENT_CATCH_UP),
            Duration::ZERO
        );
        // The same few characters again and again bind once.
        let repeated: Vec<Keysym> = cjk(3).into_iter().cycle().take(3000).collect();
        assert_eq!(
            rebinding_wait(&repeated, ascii, 3, &[], CLIENT_CATCH_UP),
            Duration::ZERO
        );
    }

    #[test]
    fn each_batch_of_spares_beyond_the_first_waits_one_catch_up() {
        // 19 spares: characters 20 to 38 wait for the first batch to catch
        // up, 39 to 57 for the second.
        assert_eq!(
            rebinding_wait(&cjk(20), ascii, 19, &[], CLIENT_CATCH_UP),
            CLIENT_CATCH_UP
        );
        assert_eq!(
            rebinding_wait(&cjk(38), ascii, 19, &[], CLIENT_CATCH_UP),
            CLIENT_CATCH_UP
        );
        assert_eq!(
            rebinding_wait(&cjk(39), ascii, 19, &[], CLIENT_CATCH_UP),
            CLIENT_CATCH_UP * 2
        );
        // 1000 distinct characters: 52 batches after the first.
        let wait = rebinding_wait(&cjk(1000), ascii, 19, &[], CLIENT_CATCH_UP);
        assert_eq!(wait, CLIENT_CATCH_UP * 52);
        assert!(wait > REBINDING_WAIT_MAX);
    }

    #[test]
    fn bindings_made_earlier_count_with_their_age() {
        // Both spares are bound already: one long idle, one just used.
        let bound = [
            Bound {
                keysym: CJK + 100,
                unused_for: Duration::from_secs(5),
            },
            Bound {
                keysym: CJK + 101,
                unused_for: Duration::from_millis(100),
            },
        ];
        // The idle one is rebound at once, the recent one after the rest
        // of its catch-up.
        assert_eq!(
            rebinding_wait(&cjk(1), ascii, 0, &bound, CLIENT_CATCH_UP),
            Duration::ZERO
        );
        let wait = rebinding_wait(&cjk(2), ascii, 0, &bound, CLIENT_CATCH_UP);
        assert_eq!(wait, CLIENT_CATCH_UP - Duration::from_millis(100));
        // A bound character typed again needs no new binding.
        assert_eq!(
            rebinding_wait(&[CJK + 101, CJK + 100], ascii, 0, &bound, CLIENT_CATCH_UP),
            Duration::ZERO
        );
    }

    #[test]
    fn no_keycode_at_all_is_not_a_wait() {
        assert_eq!(
            rebinding_wait(&cjk(5), ascii, 0, &[], CLIENT_CATCH_UP),
            Duration::ZERO
        );
    }
}
