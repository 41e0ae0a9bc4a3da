//! One screen: an Xvnc display, Fluxbox on it, and the X connection that
//! capture and input borrow. Only this module starts or stops those processes.

use super::pool::ScreenSlot;
use super::xvnc::{clear_stale_lock, fluxbox_command, xvnc_command, XvncArgs};
use crate::capture::Capturer;
use crate::config::ScreenSize;
use crate::display::{Display, DisplayError};
use crate::input::{Input, InputError};
use crate::process::Supervised;
use computer_protocol::ScreenNumber;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// How long a new Xvnc may take to accept X connections.
const XVNC_READY_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum ScreenError {
    #[error("all 16 screens are in use: end a session that no longer needs its screen (end_session), then observe again")]
    AllInUse,
    #[error("display :{display} is held by another X server (pid {pid}); set COMPUTERD_DISPLAY_BASE to a free range")]
    DisplayTaken { display: u32, pid: i32 },
    #[error("could not start `{program}` for screen {screen}: {source}; install tigervnc-standalone-server and fluxbox")]
    Spawn {
        program: &'static str,
        screen: ScreenNumber,
        source: std::io::Error,
    },
    #[error(
        "Xvnc of screen {screen} exited during start ({status}); is VNC port {rfb_port} free?"
    )]
    XvncExited {
        screen: ScreenNumber,
        status: String,
        rfb_port: u16,
    },
    #[error("screen {screen} did not come up: {source}")]
    NotReady {
        screen: ScreenNumber,
        source: DisplayError,
    },
    #[error("screen {screen} has no keyboard: {source}")]
    Keyboard {
        screen: ScreenNumber,
        source: InputError,
    },
    #[error("screen {screen} stopped working: its Xvnc exited ({status}); end this session and start a new one")]
    Died {
        screen: ScreenNumber,
        status: String,
    },
}

/// Where a screen's processes find what they need.
#[derive(Debug, Clone)]
pub struct ScreenPaths {
    pub home: PathBuf,
    pub vnc_password_file: PathBuf,
    pub fluxbox_dir: PathBuf,
    pub display_base: u32,
    pub rfb_port_base: u16,
    pub rfb_interface: String,
}

/// The X side of a screen, used by one blocking call at a time.
pub struct ScreenX {
    pub display: Display,
    pub capturer: Capturer,
    pub input: Input,
}

pub struct Screen {
    pub number: ScreenNumber,
    /// The X display number, `:display_base + number`.
    pub display_number: u32,
    pub rfb_port: u16,
    pub size: ScreenSize,
    x: Mutex<ScreenX>,
    xvnc: Supervised,
    window_manager: Option<Supervised>,
    /// Held until the processes are gone, so the number is not reused early.
    slot: Mutex<Option<ScreenSlot>>,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen")
            .field("number", &self.number)
            .field("display", &self.display_number)
            .finish()
    }
}

impl Screen {
    /// Starts Xvnc and Fluxbox for `slot` and connects to the display.
    pub async fn open(
        slot: ScreenSlot,
        size: ScreenSize,
        paths: &ScreenPaths,
    ) -> Result<Screen, ScreenError> {
        let number = slot.number;
        let display_number = paths.display_base + u32::from(number.0);
        let rfb_port = paths.rfb_port_base + u16::from(number.0);
        if let Some(pid) = clear_stale_lock(display_number) {
            return Err(ScreenError::DisplayTaken {
                display: display_number,
                pid,
            });
        }
        let command = xvnc_command(&XvncArgs {
            display: display_number,
            size,
            rfb_port,
            rfb_interface: &paths.rfb_interface,
            password_file: &paths.vnc_password_file,
            desktop_name: format!("Screen {number}"),
        });
        let xvnc = Supervised::spawn("Xvnc", command).map_err(|source| ScreenError::Spawn {
            program: "Xvnc",
            screen: number,
            source,
        })?;
        let connected =
            tokio::task::spawn_blocking(move || Display::connect(display_number, XVNC_READY_WAIT))
                .await
                .expect("display connect task does not panic");
        let display = match connected {
            Ok(display) => display,
            Err(source) => {
                xvnc.stop(Duration::from_secs(2)).await;
                return Err(match xvnc.exit_status() {
                    Some(status) => ScreenError::XvncExited {
                        screen: number,
                        status,
                        rfb_port,
                    },
                    None => ScreenError::NotReady {
                        screen: number,
                        source,
                    },
                });
            }
        };
        let input = match Input::new(&display) {
            Ok(input) => input,
            Err(source) => {
                xvnc.stop(Duration::from_secs(2)).await;
                return Err(ScreenError::Keyboard {
                    screen: number,
                    source,
                });
            }
        };
        let capturer = Capturer::new(&display);
        // A screen without a window manager still works (capture, input,
        // shell), so a Fluxbox that fails to start is logged, not fatal.
        let window_manager = match Supervised::spawn(
            "fluxbox",
            fluxbox_command(display_number, &paths.home, &paths.fluxbox_dir),
        ) {
            Ok(wm) => Some(wm),
            Err(e) => {
                tracing::warn!(screen = %number, "fluxbox did not start: {e}");
                None
            }
        };
        tracing::info!(screen = %number, display = display_number, rfb_port, %size, "screen opened");
        Ok(Screen {
            number,
            display_number,
            rfb_port,
            size,
            x: Mutex::new(ScreenX {
                display,
                capturer,
                input,
            }),
            xvnc,
            window_manager,
            slot: Mutex::new(Some(slot)),
        })
    }

    /// Runs `f` with the X side of the screen. Blocking: call it from
    /// `spawn_blocking`. Fails once Xvnc has died.
    pub fn with_x<T>(&self, f: impl FnOnce(&mut ScreenX) -> T) -> Result<T, ScreenError> {
        self.check_alive()?;
        let mut x = self.x.lock().unwrap_or_else(|e| e.into_inner());
        Ok(f(&mut x))
    }

    /// Fails with the reason when Xvnc has exited.
    pub fn check_alive(&self) -> Result<(), ScreenError> {
        match self.xvnc.exit_status() {
            Some(status) => Err(ScreenError::Died {
                screen: self.number,
                status,
            }),
            None => Ok(()),
        }
    }

    /// `DISPLAY` for programs on this screen.
    pub fn display_env(&self) -> String {
        format!(":{}", self.display_number)
    }

    /// Stops Fluxbox and Xvnc, then frees the number.
    pub async fn close(&self) {
        if let Some(wm) = &self.window_manager {
            wm.stop(Duration::from_secs(1)).await;
        }
        self.xvnc.stop(Duration::from_secs(3)).await;
        let slot = self.slot.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(slot);
        tracing::info!(screen = %self.number, "screen closed");
    }
}
