//! A screen's own D-Bus session bus and AT-SPI bus.
//!
//! `dbus-daemon --session` listens in a private folder (mode 0700) of the
//! screen; `at-spi-bus-launcher` runs on it with the screen's `DISPLAY`
//! (so it also sets `AT_SPI_BUS` on that display's root window) and with
//! `XDG_RUNTIME_DIR` set to the same folder (so the AT-SPI bus socket lives
//! there too). Toolkits find the AT-SPI bus through either, so apps started
//! with [`A11yBus::session_bus_address`] register on this screen's bus only.

use super::A11yError;
use crate::process::{one_line, Supervised};
use atspi::proxy::bus::{BusProxy, StatusProxy};
use std::collections::HashMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::Command;
use zbus::proxy::CacheProperties;

/// The launcher the at-spi2-core package installs.
pub const BUS_LAUNCHER: &str = "/usr/libexec/at-spi-bus-launcher";

/// How long the two daemons may take to come up, all told.
const START_DEADLINE: Duration = Duration::from_secs(5);

/// Lines of a daemon's stderr quoted in an error.
const OUTPUT_LINES: usize = 6;

/// The AT-SPI launcher's well-known name on the session bus.
const BUS_NAME: &str = "org.a11y.Bus";

pub struct A11yBus {
    display_number: u32,
    folder: PathBuf,
    session_address: String,
    /// A connection to the AT-SPI bus, shared by every tree read.
    a11y: zbus::Connection,
    session_daemon: Supervised,
    launcher: Supervised,
}

impl std::fmt::Debug for A11yBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A11yBus")
            .field("display", &self.display_number)
            .field("session", &self.session_address)
            .finish()
    }
}

impl A11yBus {
    /// Starts the session bus and the AT-SPI bus for display `:N` and
    /// switches accessibility on (`org.a11y.Status.IsEnabled`), so that
    /// Qt, Chromium and LibreOffice expose their trees. Within 5 s.
    pub async fn start(display_number: u32) -> Result<A11yBus, A11yError> {
        let folder = bus_folder(display_number);
        make_private_folder(&folder)?;
        let started = Instant::now();
        let session_address = session_bus_address_for(display_number);
        let session_daemon = spawn(
            "dbus-daemon",
            display_number,
            session_daemon_command(&session_address),
        )?;
        // Spawned once the session bus accepts connections: the launcher
        // gives up at once when it cannot reach it.
        let mut launcher = None;
        let ready = tokio::time::timeout(
            START_DEADLINE,
            connect_a11y(
                display_number,
                &session_address,
                &folder,
                &session_daemon,
                &mut launcher,
            ),
        )
        .await;
        let (a11y, launcher) = match (ready, launcher) {
            (Ok(Ok(a11y)), Some(launcher)) => (a11y, launcher),
            (failed, launcher) => {
                let error = match failed {
                    Ok(Err(e)) => e,
                    _ => {
                        let (program, output) = match &launcher {
                            Some(launcher) => ("at-spi-bus-launcher", said(launcher).await),
                            None => ("dbus-daemon", said(&session_daemon).await),
                        };
                        A11yError::NotReady {
                            program,
                            display: display_number,
                            waited: started.elapsed(),
                            step: "no answer on the session bus".to_string(),
                            output,
                        }
                    }
                };
                if let Some(launcher) = launcher {
                    launcher.stop(Duration::from_secs(1)).await;
                }
                session_daemon.stop(Duration::from_secs(1)).await;
                let _ = std::fs::remove_dir_all(&folder);
                return Err(error);
            }
        };
        tracing::debug!(
            display = display_number,
            ms = started.elapsed().as_millis() as u64,
            "accessibility bus up"
        );
        Ok(A11yBus {
            display_number,
            folder,
            session_address,
            a11y,
            session_daemon,
            launcher,
        })
    }

    /// `DBUS_SESSION_BUS_ADDRESS` for every process started on this screen.
    pub fn session_bus_address(&self) -> &str {
        &self.session_address
    }

    /// The connection tree reads use.
    pub(crate) fn connection(&self) -> &zbus::Connection {
        &self.a11y
    }

    /// True while both daemons run.
    pub fn is_running(&self) -> bool {
        self.session_daemon.exit_status().is_none() && self.launcher.exit_status().is_none()
    }

    /// Stops the launcher (which stops the AT-SPI bus; the registry exits
    /// with its bus), then the session bus, and removes the folder.
    pub async fn stop(&self) {
        signal_group(&self.launcher, libc::SIGTERM);
        self.launcher.stop(Duration::from_secs(1)).await;
        // The launcher's AT-SPI bus, when the launcher could not stop it.
        signal_group(&self.launcher, libc::SIGKILL);
        self.session_daemon.stop(Duration::from_secs(1)).await;
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

impl Drop for A11yBus {
    /// The fallback when `stop` did not run: a killed launcher leaves its
    /// AT-SPI bus behind, so its whole group goes; `Supervised` kills the
    /// session bus. The folder goes too.
    fn drop(&mut self) {
        signal_group(&self.launcher, libc::SIGKILL);
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

/// Signals the process group `process` leads (it was started with a group
/// of its own, and its children stay in it). The group outlives its
/// leader while a child is in it, so its id is not reused meanwhile.
fn signal_group(process: &Supervised, signal: libc::c_int) {
    if process.pid > 0 {
        // SAFETY: kill(2) on a group we created, with a valid signal.
        unsafe { libc::kill(-process.pid, signal) };
    }
}

/// The private folder of display `:N`'s buses. Fixed per display, so the
/// environment of a screen's processes follows from its display number.
fn bus_folder(display: u32) -> PathBuf {
    std::env::temp_dir().join(format!("computerd-a11y-{display}"))
}

/// The session bus address of display `:N` (see [`A11yBus::start`]).
pub fn session_bus_address_for(display: u32) -> String {
    format!("unix:path={}", bus_folder(display).join("bus").display())
}

/// A fresh folder only this user can enter. A folder of the same name is
/// what a crashed computerd left for the same display (the display is ours
/// now, as Xvnc holds it), so it goes first.
fn make_private_folder(folder: &Path) -> Result<(), A11yError> {
    let failed = |source| A11yError::Folder {
        path: folder.display().to_string(),
        source,
    };
    match std::fs::remove_dir_all(folder) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(failed(e)),
        _ => {}
    }
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(folder)
        .map_err(failed)
}

fn spawn(program: &'static str, display: u32, command: Command) -> Result<Supervised, A11yError> {
    Supervised::spawn(program, command).map_err(|source| A11yError::Spawn {
        program,
        display,
        source,
    })
}

fn session_daemon_command(address: &str) -> Command {
    let mut cmd = Command::new("dbus-daemon");
    cmd.args(["--session", "--nofork", "--nopidfile"])
        .arg(format!("--address={address}"));
    quiet(&mut cmd);
    cmd
}

fn launcher_command(display: u32, session_address: &str, folder: &Path) -> Command {
    let mut cmd = Command::new(BUS_LAUNCHER);
    cmd.arg("--launch-immediately")
        .env("DISPLAY", format!(":{display}"))
        .env("DBUS_SESSION_BUS_ADDRESS", session_address)
        .env("XDG_RUNTIME_DIR", folder);
    // It puts the bus's address on the root window: a desktop program.
    if let Some(auth) = crate::x_auth::installed() {
        cmd.env("XAUTHORITY", auth.desktop_file());
    }
    quiet(&mut cmd);
    cmd
}

fn quiet(cmd: &mut Command) {
    // An address inherited from computerd's own environment would point
    // the daemons at another bus.
    cmd.env_remove("AT_SPI_BUS_ADDRESS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // Kept in a tail that errors about the start quote.
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(false);
}

async fn said(process: &Supervised) -> String {
    let tail = if process.exit_status().is_some() {
        process
            .last_words(OUTPUT_LINES, Duration::from_millis(300))
            .await
    } else {
        process.stderr_tail(OUTPUT_LINES)
    };
    one_line(&tail)
}

/// Waits for the session bus, starts the launcher (into `launcher_slot`,
/// so the caller can quote and stop it after a timeout), waits for its name on it (without
/// calling it first: a call would make the session bus start a launcher of
/// its own from its service file, one that knows no display), switches
/// accessibility on and connects to the AT-SPI bus.
async fn connect_a11y(
    display: u32,
    session_address: &str,
    folder: &Path,
    session_daemon: &Supervised,
    launcher_slot: &mut Option<Supervised>,
) -> Result<zbus::Connection, A11yError> {
    let started = Instant::now();
    let exited = |program: &'static str, process: &Supervised| {
        process.exit_status().map(|status| (program, status))
    };
    let not_ready = |program: &'static str, step: String, output: String| A11yError::NotReady {
        program,
        display,
        waited: started.elapsed(),
        step,
        output,
    };
    let session = loop {
        if let Some((program, status)) = exited("dbus-daemon", session_daemon) {
            return Err(A11yError::Exited {
                program,
                display,
                status,
                output: said(session_daemon).await,
            });
        }
        match zbus::connection::Builder::address(session_address)?
            .build()
            .await
        {
            Ok(connection) => break connection,
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    };
    let launcher = &*launcher_slot.insert(spawn(
        "at-spi-bus-launcher",
        display,
        launcher_command(display, session_address, folder),
    )?);
    let dbus = zbus::fdo::DBusProxy::new(&session).await?;
    // Services the session bus starts (dconf, portals) draw on this screen.
    let display_env = format!(":{display}");
    let mut activation = HashMap::from([("DISPLAY", display_env.clone())]);
    if let Some(auth) = crate::x_auth::installed() {
        activation.insert("XAUTHORITY", auth.desktop_file().display().to_string());
    }
    dbus.update_activation_environment(
        activation
            .iter()
            .map(|(name, value)| (*name, value.as_str()))
            .collect::<HashMap<_, _>>(),
    )
    .await
    .map_err(zbus::Error::from)?;
    let bus_name = zbus::names::BusName::try_from(BUS_NAME).expect("a valid bus name");
    loop {
        if let Some((program, status)) = exited("at-spi-bus-launcher", launcher) {
            return Err(A11yError::Exited {
                program,
                display,
                status,
                output: said(launcher).await,
            });
        }
        if dbus
            .name_has_owner(bus_name.clone())
            .await
            .map_err(zbus::Error::from)?
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let status = StatusProxy::builder(&session)
        .cache_properties(CacheProperties::No)
        .build()
        .await?;
    status.set_is_enabled(true).await.map_err(|e| {
        not_ready(
            "at-spi-bus-launcher",
            format!("setting `IsEnabled` failed: {e}"),
            String::new(),
        )
    })?;
    let bus = BusProxy::builder(&session)
        .cache_properties(CacheProperties::No)
        .build()
        .await?;
    let address = bus.get_address().await?;
    let a11y = zbus::connection::Builder::address(address.as_str())?
        .build()
        .await?;
    // Starts the registry now (D-Bus activation), not on the first read.
    let registry = atspi::proxy::accessible::AccessibleProxy::builder(&a11y)
        .destination("org.a11y.atspi.Registry")?
        .path("/org/a11y/atspi/accessible/root")?
        .cache_properties(CacheProperties::No)
        .build()
        .await?;
    registry.get_children().await.map_err(|e| {
        not_ready(
            "at-spi2-registryd",
            format!("the registry did not answer: {e}"),
            String::new(),
        )
    })?;
    Ok(a11y)
}
