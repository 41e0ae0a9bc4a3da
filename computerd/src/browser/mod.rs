//! One Chromium per screen, with logins shared across screens.
