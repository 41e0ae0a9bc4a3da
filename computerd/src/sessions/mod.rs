//! Sessions: who is using the computer, their working folders and screens,
//! and the timers that end forgotten ones.

mod registry;
mod reaper;
mod session;

pub use reaper::run_reaper;
pub use registry::{Sessions, SessionError};
pub use session::{ActivityGuard, RepeatTracker, Session, SessionLimits};
