//! Settle on quiet: after a batch, wait until the screen has not changed
//! for a while (or a longest wait runs out), instead of a fixed sleep. The
//! X DAMAGE extension tells when anything on the screen is drawn.

use super::DesktopError;
use crate::display::{Display, XFault};
use crate::screens::Screen;
use computer_protocol::{Settle, Settling};
use std::sync::Arc;
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::damage::{ConnectionExt as _, ReportLevel};
use x11rb::protocol::Event;

/// How often pending damage events are read.
const POLL: Duration = Duration::from_millis(5);

/// How the wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// True when the screen was still for `quiet`; false when `longest`
    /// ran out first.
    pub quiet: bool,
    pub waited: Duration,
}

/// Waits before an acting tool's screenshot: `settle_ms` (fixed), or until
/// the screen has been still for `quiet_ms`, at most `settle_ms` (quiet).
/// Returns whether the screen was still, and how long it waited.
pub async fn settle(
    screen: &Arc<Screen>,
    settling: Settling,
) -> Result<(bool, Duration), DesktopError> {
    let longest = Duration::from_millis(settling.settle_ms);
    match settling.settle {
        Settle::Fixed => {
            tokio::time::sleep(longest).await;
            Ok((true, longest))
        }
        Settle::Quiet => {
            let number = screen.display_number;
            let quiet = Duration::from_millis(settling.quiet_ms);
            // On a connection of its own, not the X thread: a settle
            // must not hold back the screen's other work.
            let settled = crate::blocking::run(move || wait_quiet(number, quiet, longest)).await?;
            Ok((settled.quiet, settled.waited))
        }
    }
}

/// Watches display `:number` until nothing was drawn for `quiet`, or
/// `longest` has passed. Blocking. It uses a connection of its own: its
/// events must not reach the screen's shared one.
pub fn wait_quiet(number: u32, quiet: Duration, longest: Duration) -> Result<Settled, XFault> {
    let started = Instant::now();
    let fail = |e: &dyn std::fmt::Display| XFault::new(number, "watching for drawing", e);
    let display = Display::connect_once(number).map_err(|e| fail(&e))?;
    let conn = &display.conn;
    conn.damage_query_version(1, 1)
        .map_err(|e| fail(&e))?
        .reply()
        .map_err(|e| fail(&e))?;
    let damage = conn.generate_id().map_err(|e| fail(&e))?;
    // One event per drawing burst: it is re-armed by each subtract.
    conn.damage_create(damage, display.root, ReportLevel::NON_EMPTY)
        .map_err(|e| fail(&e))?;
    conn.flush().map_err(|e| fail(&e))?;
    let mut last_change = started;
    let quiet_now = loop {
        // The time is read before the events: drawing up to `now` is then
        // in them. Read after, a thread descheduled between the two on a
        // busy machine took the drawing meanwhile for stillness.
        let now = Instant::now();
        let mut drawn = false;
        while let Some(event) = conn.poll_for_event().map_err(|e| fail(&e))? {
            if let Event::DamageNotify(_) = event {
                drawn = true;
            }
        }
        if drawn {
            last_change = now;
            conn.damage_subtract(damage, x11rb::NONE, x11rb::NONE)
                .map_err(|e| fail(&e))?;
            conn.flush().map_err(|e| fail(&e))?;
        }
        if now.duration_since(last_change) >= quiet {
            break true;
        }
        if now.duration_since(started) >= longest {
            break false;
        }
        std::thread::sleep(POLL);
    };
    let _ = conn.damage_destroy(damage);
    let _ = conn.flush();
    Ok(Settled {
        quiet: quiet_now,
        waited: started.elapsed(),
    })
}
