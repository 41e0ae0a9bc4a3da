//! Sessions: who is using the computer, their working folders and screens,
//! the viewers watching those screens, and the timers that end forgotten
//! sessions.

mod overview;
mod reaper;
mod registry;
mod session;
mod watching;

pub use overview::{HeldOverview, SessionOverview};
pub use reaper::run_reaper;
pub use registry::{SessionError, Sessions};
pub use session::{ActivityGuard, Session, SessionLimits};
pub use watching::Watching;
