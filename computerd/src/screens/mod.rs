//! Screens: one Xvnc display plus Fluxbox each, numbered 1 to 16.
//!
//! # Layout
//! - `pool`: the numbers, each held until its processes are gone.
//! - `xvnc`, `drawn`: starting Xvnc and waiting for Fluxbox to draw. What
//!   every process on a screen gets (`DISPLAY`, its buses) is
//!   [`crate::screen_facts::ScreenEnv`].
//! - `screen`: one open [`Screen`], its processes, and closing it.
//! - `x_thread`: the thread that owns a screen's X connection and runs the
//!   jobs that use it (capture, input, window queries) one at a time.
//! - `watch`: a screen's second X connection, for `computer_act`'s effects.
//! - `companion`: what runs beside a screen ([`Companion`]: the browser, its
//!   DevTools bridge) and stops before it. This module imports none of them.

mod companion;
mod drawn;
mod pool;
mod screen;
mod watch;
mod x_thread;
mod xvnc;

pub use companion::Companion;
pub use pool::{ScreenPool, ScreenSlot};
pub use screen::{Screen, ScreenError, ScreenPaths, ScreenX};
pub use watch::WatchConnection;
pub use xvnc::ensure_socket_dir;
