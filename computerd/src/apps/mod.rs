//! Opening pages, files and applications on a screen.

mod launch;

pub use launch::{LaunchError, Launcher, OnScreen, Opened, PAGE_WAIT, WINDOW_WAIT};
