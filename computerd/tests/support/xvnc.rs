//! A real Xvnc for one test: a free display number of its own (from 150 up,
//! so parallel tests and other suites do not collide), started headless,
//! waited for by connecting, and stopped on drop. Also programs started on
//! it, stopped on drop.
//!
//! Included by path from the X tests (`mod support { pub mod xvnc; }`) and
//! the benches in `examples/`, which cannot use `tests/common/`: that starts
//! the computerd binary, which cargo builds only for integration tests.
#![allow(dead_code)]

#[path = "fluxbox_config.rs"]
mod fluxbox_config;

use computerd::display::Display;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use tempfile::TempDir;
use test_support::{require_program, wait_until_blocking};

/// Display numbers this helper uses: `:150` to `:399`.
const FIRST_DISPLAY: u32 = 150;
const DISPLAYS: u32 = 250;
/// How long Xvnc may take to accept a connection.
const START_WAIT: Duration = Duration::from_secs(10);

pub const INSTALL: &str = "apt-get install tigervnc-standalone-server xterm fluxbox";

static NEXT: AtomicU32 = AtomicU32::new(0);

/// One running Xvnc.
pub struct Xvnc {
    pub number: u32,
    child: Child,
    /// HOME for programs started on this display (Fluxbox writes its
    /// settings there), and Xvnc's log.
    pub home: TempDir,
}

impl Xvnc {
    /// A 1280x800, depth 24 Xvnc with no VNC port.
    pub fn start() -> Xvnc {
        Xvnc::start_sized(1280, 800)
    }

    pub fn start_sized(width: u16, height: u16) -> Xvnc {
        require_program("Xvnc", INSTALL);
        computerd::screens::ensure_socket_dir().expect("make /tmp/.X11-unix");
        let mut home = tempfile::tempdir().expect("temp dir");
        for _ in 0..DISPLAYS {
            let number = candidate();
            if Path::new(&format!("/tmp/.X{number}-lock")).exists()
                || Path::new(&format!("/tmp/.X11-unix/X{number}")).exists()
            {
                continue;
            }
            let log = home.path().join(format!("Xvnc-{number}.log"));
            let child = Command::new("Xvnc")
                .arg(format!(":{number}"))
                .args(["-geometry", &format!("{width}x{height}")])
                .args(["-depth", "24", "-SecurityTypes", "None", "-rfbport", "-1"])
                .args(["-nolisten", "tcp"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).expect("Xvnc log file"))
                .process_group(0)
                .spawn()
                .unwrap_or_else(|e| panic!("could not start Xvnc: {e}; run `{INSTALL}`"));
            let mut xvnc = Xvnc {
                number,
                child,
                home,
            };
            match xvnc.wait_ready(&log) {
                Ready::Yes => return xvnc,
                // Another process took the number between our check and
                // Xvnc's lock: try the next one.
                Ready::Taken => {
                    home =
                        std::mem::replace(&mut xvnc.home, tempfile::tempdir().expect("temp dir"));
                    drop(xvnc);
                }
            }
        }
        panic!(
            "no free X display between :{FIRST_DISPLAY} and :{}",
            FIRST_DISPLAY + DISPLAYS - 1
        );
    }

    fn wait_ready(&mut self, log: &Path) -> Ready {
        let name = format!(":{}", self.number);
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("poll Xvnc") {
                let text = std::fs::read_to_string(log).unwrap_or_default();
                if text.contains("already active")
                    || text.contains("Cannot establish any listening sockets")
                {
                    return Ready::Taken;
                }
                panic!("Xvnc {name} exited during start ({status}):\n{text}");
            }
            if x11rb::connect(Some(&name)).is_ok() {
                return Ready::Yes;
            }
            assert!(
                started.elapsed() < START_WAIT,
                "Xvnc {name} did not accept a connection within {START_WAIT:?}:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A new connection to this display.
    pub fn connect(&self) -> Display {
        Display::connect(self.number, START_WAIT).expect("connect to Xvnc")
    }

    /// `program` set up to run on this display in a UTF-8 locale.
    pub fn command(&self, program: &str) -> Command {
        require_program(program, INSTALL);
        let mut cmd = Command::new(program);
        cmd.env("DISPLAY", format!(":{}", self.number))
            .env("HOME", self.home.path())
            .env("LANG", "C.UTF-8")
            .env("LC_ALL", "C.UTF-8")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        cmd
    }

    /// Starts `cmd`; it is stopped (with everything it started) on drop.
    pub fn spawn(&self, mut cmd: Command) -> Program {
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {cmd:?}: {e}; run `{INSTALL}`"));
        Program { child }
    }

    /// Starts Fluxbox with the computer's own settings (see
    /// `fluxbox_config`) and waits until it manages the screen (it has set
    /// `_NET_SUPPORTING_WM_CHECK` on the root window).
    pub fn start_fluxbox(&self, display: &Display) -> Program {
        use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};
        let settings = fluxbox_config::write_to(&self.home.path().join("fluxbox-settings"));
        fluxbox_config::write_home_overlay(self.home.path());
        let mut fluxbox = self.command("fluxbox");
        fluxbox.arg("-rc").arg(settings.join("init"));
        let wm = self.spawn(fluxbox);
        let check = display
            .conn
            .intern_atom(false, b"_NET_SUPPORTING_WM_CHECK")
            .expect("send")
            .reply()
            .expect("intern")
            .atom;
        wait_until_blocking(
            "Fluxbox to manage the screen",
            Duration::from_secs(10),
            || {
                let reply = display
                    .conn
                    .get_property(false, display.root, check, AtomEnum::WINDOW, 0, 1)
                    .ok()?
                    .reply()
                    .ok()?;
                (reply.value_len > 0).then_some(())
            },
        );
        wm
    }

    pub fn log_dir(&self) -> PathBuf {
        self.home.path().to_path_buf()
    }
}

impl Drop for Xvnc {
    fn drop(&mut self) {
        stop(&mut self.child, Duration::from_secs(3));
        // Xvnc removes these on SIGTERM; after a SIGKILL they are ours to clear.
        let _ = std::fs::remove_file(format!("/tmp/.X{}-lock", self.number));
        let _ = std::fs::remove_file(format!("/tmp/.X11-unix/X{}", self.number));
    }
}

enum Ready {
    Yes,
    Taken,
}

/// The next display number to try: spread by process id so test processes
/// running side by side start apart, then one after another.
fn candidate() -> u32 {
    let k = NEXT.fetch_add(1, Ordering::SeqCst);
    FIRST_DISPLAY + (std::process::id().wrapping_mul(37).wrapping_add(k)) % DISPLAYS
}

/// A program started on a test display.
pub struct Program {
    child: Child,
}

impl Program {
    /// Its exit status, once it has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().expect("poll child")
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        stop(&mut self.child, Duration::from_secs(2));
    }
}

/// SIGTERM to the child's process group, SIGKILL after `grace`, then reap.
fn stop(child: &mut Child, grace: Duration) {
    if child.try_wait().ok().flatten().is_some() {
        return;
    }
    let group = child.id() as i32;
    // SAFETY: signalling a process group we created.
    unsafe { libc::kill(-group, libc::SIGTERM) };
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: as above.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    let _ = child.wait();
}
