//! Sessions: who is using the computer, their working folders and screens,
//! and the timers that end forgotten ones.

mod reaper;
mod registry;
mod session;

pub use reaper::run_reaper;
pub use registry::{SessionError, Sessions};
pub use session::{ActivityGuard, RepeatTracker, Session, SessionLimits};
