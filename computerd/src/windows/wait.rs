//! Waiting for a started app's window to show and take the focus.

use super::focus::{active_is, active_matches, focus_window, focus_window_id, window_list};
use crate::display::{Display, XFault};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Polls until a window matching `hint` (class or title, when not empty)
/// or, when `before` is given, any window not in it shows and holds the
/// focus. Blocking. `None` counts only the hint: the browser, whose
/// window may take longer than another app's that opens meanwhile.
///
/// A new window is listed before it is mapped, and the window manager
/// ignores focus asked for too early; so the focus is asked again on each
/// poll until the screen's active window is the one wanted.
pub fn wait_for_window(
    display: &Display,
    hint: &str,
    before: Option<&HashSet<u32>>,
    wait: Duration,
) -> Result<bool, XFault> {
    let started = Instant::now();
    loop {
        if !hint.is_empty() && focus_window(display, hint)? && active_matches(display, hint)? {
            return Ok(true);
        }
        // A window that was not there before is the started app's, even
        // when its class and title do not hold the hint (`xev` titles its
        // window "Event Tester"), and even on a screen that had none.
        if let Some(before) = before {
            let now = window_list(display)?;
            if let Some(new) = now.into_iter().find(|w| !before.contains(w)) {
                focus_window_id(display, new)?;
                if active_is(display, new)? {
                    return Ok(true);
                }
            }
        }
        if started.elapsed() > wait {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
