//! Opening pages, files and applications on a screen: `open_path`,
//! `launch_app`, the `focus` action's fallback and the launcher behind the
//! screens' menus all come here.
//!
//! # Layout
//! - `target`: what `open_path`'s `target` is (an http(s) URL or an existing
//!   file or folder) and whether Chromium or `xdg-open` opens it.
//! - `resolve`: what `launch_app`'s `app` names (the browser, the terminal,
//!   a `.desktop` entry or a program on `PATH`) and the window to raise.
//! - `desktop_entry`: installed applications from `.desktop` files, with
//!   `Exec` split and its field codes expanded.
//! - `error`: [`AppError`] and its wire code.
//! - `clipboard`: a file's text onto a screen's clipboard, for the
//!   agent's shell, whose own X programs cannot serve it.
//! - `launch`: doing it: the screen's browser through
//!   [`crate::browser`], other apps started detached, windows awaited and
//!   raised over an X connection of its own.
//!
//! The first four decide and are tested without a screen; `launch` acts.

pub mod clipboard;
mod desktop_entry;
mod error;
mod launch;
mod resolve;
mod target;

pub use desktop_entry::{default_dirs, installed, DesktopEntry, ParseError};
pub use error::AppError;
pub use launch::{FocusError, LaunchError, Launcher, OnScreen, Opened, PAGE_WAIT, WINDOW_WAIT};
pub use resolve::{check_uri, resolve, window_hint, AppSpec};
pub use target::{classify, file_url, FileKind, OpenTarget};
