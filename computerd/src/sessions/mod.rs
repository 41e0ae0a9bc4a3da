//! Sessions: who is using the computer, their working folders and screens,
//! the viewers watching those screens, the timers that end forgotten
//! sessions, and the one that stops an unused computer.

mod overview;
mod reaper;
mod registry;
mod session;
mod unused;
mod watching;

pub use overview::{HeldOverview, SessionOverview};
pub use reaper::run_reaper;
pub use registry::{SessionError, Sessions};
pub use session::{ActivityGuard, CallGuard, Session, SessionLimits};
pub use unused::run_unused_stop;
pub use watching::Watching;
