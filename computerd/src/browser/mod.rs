//! One Chromium per screen, with logins shared across screens.
//!
//! # Layout
//! - [`registry`]: every screen's browser: started on first need, closed
//!   with its screen, a crash noticed; and the 2 s cookie sync round.
//! - [`chromium`]: one Chromium process, all its flags, its start until
//!   DevTools answer and its clean close.
//! - [`cdp`]: the DevTools client (one WebSocket per browser).
//! - [`native_a11y`]: turns on Chromium's accessibility for its own
//!   windows (not its pages) while one of its menus is read.
//! - [`page`]: opening a page in a tab and waiting for it to load.
//! - [`pages`]: the open pages' URLs and titles, kept current from
//!   DevTools events, for what each `computer_act` action changed.
//! - [`cookie`]: one cookie as Chrome DevTools Protocol reads and writes it,
//!   its identity, and which differences are a change; its `Debug` hides the
//!   value.
//! - [`cookie_read`]: a `Storage.getCookies` answer read cookie by cookie;
//!   one that does not parse is never taken for a sign-out.
//! - [`cookie_write`]: writing cookies with `Storage.setCookies`, a refused
//!   batch split until only the refused cookies fail.
//! - [`jar`]: the merged cookies of every Chromium (sign-ins and sign-outs
//!   alike), what to write into each one, and the `cookies.json` file.
//! - [`preferences`]: the settings of Chromium's `Preferences` that carry
//!   over; site permissions and handlers do not.
//! - [`shown`]: the page a screen's Chromium shows, for recordings and
//!   handoffs.
//! - [`profile`]: the template profile each Chromium is cloned from, and
//!   what a cleanly closed one copies back.
//!
//! Data flows: a request needing a browser → [`Browsers::ensure`] clones
//! the template, starts Chromium and writes the jar's cookies into it
//! before the first page; every 2 s [`run_cookie_sync`] reads each
//! browser's cookies into the jar and writes the differences into the
//! others; the screen's close → [`Browsers::close`] saves the last
//! cookies, closes Chromium and copies its changes to the template.

pub mod cdp;
pub mod chromium;
pub mod cookie;
pub mod cookie_read;
pub mod cookie_write;
pub mod jar;
pub mod native_a11y;
pub mod page;
pub mod pages;
pub mod preferences;
pub mod profile;
pub mod registry;
pub mod shown;

pub use cdp::{Cdp, CdpError};
pub use registry::{
    jar_path, run_cookie_sync, Browser, BrowserError, BrowserScreen, BrowserSettings, Browsers,
};
