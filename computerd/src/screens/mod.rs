//! Screens: one Xvnc display plus Fluxbox each, numbered 1 to 16.

mod pool;
mod screen;
mod xvnc;

pub use pool::{ScreenPool, ScreenSlot};
pub use screen::{Screen, ScreenError, ScreenPaths, ScreenX};
