//! One Chromium per screen, with logins shared across screens.

mod cdp;
mod chromium;
mod page;
mod registry;

pub use cdp::{Cdp, CdpError};
pub use registry::{
    jar_path, run_cookie_sync, Browser, BrowserError, BrowserScreen, BrowserSettings, Browsers,
};
