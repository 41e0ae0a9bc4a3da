//! Sessions: who is using the computer, their working folders and screens,
//! the viewers watching those screens, the timers that end forgotten
//! sessions, and the one that stops an unused computer.
//!
//! [`Sessions`] is one registry split by job: `registry` (sessions made,
//! found and ended, and the owners' heartbeats), `screens_open` (each
//! session's screen, opened on first use) and `viewers` (who watches a
//! screen, and the last viewer of an ended session closing it). `session`
//! is one session's own state; `reaper` and `unused` are the timers.

mod error;
mod overview;
mod reaper;
mod registry;
mod screens_open;
mod session;
mod unused;
mod viewers;
mod watching;

pub use error::SessionError;
pub use overview::{HeldOverview, SessionOverview};
pub use reaper::run_reaper;
pub use registry::Sessions;
pub use session::{ActivityGuard, CallGuard, Session, SessionLimits};
pub use unused::run_unused_stop;
pub use watching::Watching;
