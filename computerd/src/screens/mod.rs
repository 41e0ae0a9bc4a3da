//! Screens: one Xvnc display plus Fluxbox each, numbered 1 to 16.

mod drawn;
mod env;
mod pool;
mod screen;
mod xvnc;

pub use env::ScreenEnv;
pub use pool::{ScreenPool, ScreenSlot};
pub use screen::{Screen, ScreenError, ScreenPaths, ScreenX};
pub use xvnc::ensure_socket_dir;
