//! One Chromium per screen, with logins shared across screens.
//!
//! # Layout
//! - [`cookie`]: one cookie as Chrome DevTools Protocol reads and writes it,
//!   its identity, and which differences are a change; its `Debug` hides the
//!   value.
//! - [`jar`]: the merged cookies of every Chromium (sign-ins and sign-outs
//!   alike), what to write into each one, and the `cookies.json` file.

pub mod cookie;
pub mod jar;
