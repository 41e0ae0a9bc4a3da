//! Opening pages, files and applications on a screen: the deciding part of
//! `open_path` and `launch_app`, pure enough to test without a screen.
//!
//! # Layout
//! - `target`: what `open_path`'s `target` is (an http(s) URL or an existing
//!   file or folder) and whether Chromium or `xdg-open` opens it.
//! - `resolve`: what `launch_app`'s `app` names (the browser, the terminal,
//!   a `.desktop` entry or a program on `PATH`) and the window to raise.
//! - `desktop_entry`: installed applications from `.desktop` files, with
//!   `Exec` split and its field codes expanded.
//! - `error`: [`AppError`] and its wire code.

mod desktop_entry;
mod error;
mod resolve;
mod target;

pub use desktop_entry::{default_dirs, installed, DesktopEntry, ParseError};
pub use error::AppError;
pub use resolve::{check_uri, resolve, window_hint, AppSpec};
pub use target::{classify, file_url, FileKind, OpenTarget};
