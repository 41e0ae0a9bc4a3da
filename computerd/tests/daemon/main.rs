//! The daemon tier: a real computerd on real Xvnc screens, driven over its
//! API, its viewer and VNC, and in headless Chromium; each test runs a
//! daemon of its own on a display range it claims (`common::daemon`). One
//! binary with a module per subject, so it links once and its tests fill
//! both test threads; run one with `cargo test -p computerd --test daemon
//! browser::`.

#[path = "../common/mod.rs"]
mod common;

mod act_effects;
mod api_desktop;
mod api_screens;
mod api_sessions;
mod api_shell_files;
mod browser;
mod browser_open;
mod frames;
mod hardening;
mod recording;
mod textview;
mod transfer;
mod viewer_bridge;
mod viewer_browser;
mod viewer_guards;
mod viewer_live;
mod viewer_native_vnc;
mod x_access;
