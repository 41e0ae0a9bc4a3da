//! Test support: a real computerd on an ephemeral port with a real token,
//! real Xvnc screens on a display range of its own, and a small HTTP client.
#![allow(dead_code)]

pub mod daemon;
#[path = "../support/fluxbox_config.rs"]
pub mod fluxbox_config;
pub mod frame_pixels;
pub mod processes;
pub mod viewer;
pub mod wait;

#[allow(unused_imports)]
pub use daemon::{Daemon, DaemonOptions};
#[allow(unused_imports)]
pub use wait::wait_until;

/// Fails loudly, with the install command, when a program the tests need is
/// missing: the suite never passes by skipping.
pub fn require_programs(programs: &[(&str, &str)]) {
    for (program, package) in programs {
        let found = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
            .unwrap_or(false);
        assert!(
            found,
            "`{program}` is not installed; run `apt-get install {package}` (or `bash .ci/run`)"
        );
    }
}

/// Like [`require_programs`], for programs that do not come from apt.
pub fn require_program(program: &str, install: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "`{program}` is not installed; run `{install}` (or `bash scripts/install-test-deps.sh`)"
    );
}

pub fn require_x_programs() {
    require_programs(&[
        ("Xvnc", "tigervnc-standalone-server"),
        ("vncpasswd", "tigervnc-tools"),
        ("fluxbox", "fluxbox"),
        ("xterm", "xterm"),
    ]);
}
