//! One Chromium per screen, with logins shared across screens.

pub mod profile;
