//! Helpers of the tests that run computerd: a real computerd on an
//! ephemeral port with a real token, real Xvnc screens on a display range of
//! its own, and a small HTTP client (`daemon`); the viewer page's client
//! (`viewer`), frame pixels and process listings. The image's Fluxbox
//! settings (`fluxbox_config`) live in `tests/support/` beside the bare Xvnc
//! helper, which the X tests and the benches in `examples/` use without a
//! daemon.
//!
//! Helpers every crate's tests share (waiting with a deadline, requiring a
//! program, trees of files) are in the `test-support` crate; the ones these
//! tests use are re-exported here under the names they always had.
#![allow(dead_code)]

pub mod daemon;
#[path = "../support/fluxbox_config.rs"]
pub mod fluxbox_config;
pub mod frame_pixels;
pub mod processes;
pub mod viewer;

#[allow(unused_imports)]
pub use daemon::{Daemon, DaemonOptions};
#[allow(unused_imports)]
pub use test_support::{require_program, require_programs, wait_until};

/// The programs behind every screen of a daemon.
pub fn require_x_programs() {
    require_programs(&[
        ("Xvnc", "tigervnc-standalone-server"),
        ("vncpasswd", "tigervnc-tools"),
        ("fluxbox", "fluxbox"),
        ("xterm", "xterm"),
    ]);
}
