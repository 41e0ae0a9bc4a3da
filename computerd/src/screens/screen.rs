//! One screen: an Xvnc display, Fluxbox on it, and the X connection that
//! capture and input borrow. Only this module starts or stops those processes.
//! A screen is handed to its session once Fluxbox has drawn its desktop
//! (see [`super::drawn`]).

use super::companion::Companion;
use super::drawn::{desktop_not_drawn, DESKTOP_DRAWN_POLL, DESKTOP_DRAWN_WAIT};
use super::pool::{ScreenPool, ScreenSlot};
use super::watch::WatchConnection;
use super::x_thread::XThread;
use super::xvnc::{
    clear_stale_lock, ensure_socket_dir, fluxbox_command, lock_owner, xvnc_command, XvncArgs,
    SOCKET_DIR,
};
use crate::a11y::{A11yBus, A11yError};
use crate::capture::{Capturer, Rescaler};
use crate::display::Display;
use crate::input::{Input, InputError};
use crate::process::Supervised;
use crate::screen_facts::ScreenEnv;
use crate::windows::WmMenus;
use computer_protocol::ScreenSize;
use computer_protocol::{Coded, ErrorCode, ScreenNumber};
use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a new Xvnc may take to accept X connections.
const XVNC_READY_WAIT: Duration = Duration::from_secs(10);

/// Lines of Xvnc's stderr quoted in an error about its start.
const XVNC_OUTPUT_LINES: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum ScreenError {
    #[error("all 16 screens are in use: end a session that no longer needs its screen (end_session), then observe again")]
    AllInUse,
    #[error("no screen can start: {in_use} screens are in use and the displays of the other {failing} failed to start in the last minute (computerd's log says why); free those X displays or set COMPUTERD_DISPLAY_BASE to a free range")]
    NoWorkingDisplay { in_use: usize, failing: usize },
    #[error("display :{display} is held by another X server (pid {pid}); set COMPUTERD_DISPLAY_BASE to a free range")]
    DisplayTaken { display: u32, pid: i32 },
    #[error("cannot make the folder of X sockets {SOCKET_DIR}: {source}; make it with `install -d -m 1777 {SOCKET_DIR}`")]
    SocketDir { source: std::io::Error },
    #[error("could not start `{program}` for screen {screen}: {source}; install tigervnc-standalone-server and fluxbox")]
    Spawn {
        program: &'static str,
        screen: ScreenNumber,
        source: std::io::Error,
    },
    #[error("Xvnc of screen {screen} (display :{display}, VNC port {rfb_port}) exited by itself during start ({status}); it said: {output}")]
    XvncExited {
        screen: ScreenNumber,
        display: u32,
        rfb_port: u16,
        status: String,
        output: String,
    },
    #[error("Xvnc of screen {screen} (display :{display}) accepted no X connection within {waited:?}, so computerd stopped it; last error: {last}; it said: {output}")]
    NoConnection {
        screen: ScreenNumber,
        display: u32,
        waited: Duration,
        last: String,
        output: String,
    },
    #[error("screen {screen}'s desktop was not drawn within {}: {missing}; observe again to give it more time, or end this session (end_session) and start a new one", computer_protocol::duration::format_duration(*waited))]
    NotDrawn {
        screen: ScreenNumber,
        waited: Duration,
        missing: String,
    },
    #[error("screen {screen}'s desktop cannot be drawn: its window manager Fluxbox exited ({status}) before drawing it; end this session (end_session) and start a new one (computerd's log says more)")]
    WindowManagerExited {
        screen: ScreenNumber,
        status: String,
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
    #[error("computerd is shutting down; start a new session once it is back")]
    ShuttingDown,
    #[error("screen {screen} cannot start its X thread: {source}; the computer is out of threads or memory, so end sessions that are done (end_session)")]
    XThread {
        screen: ScreenNumber,
        source: std::io::Error,
    },
}

impl ScreenError {
    /// True when the failure belongs to the display number (another server
    /// holds it, its port is taken, its Xvnc could not start there), so the
    /// next number may well work.
    pub fn is_display_fault(&self) -> bool {
        matches!(
            self,
            ScreenError::DisplayTaken { .. }
                | ScreenError::XvncExited { .. }
                | ScreenError::NoConnection { .. }
        )
    }
}

impl Coded for ScreenError {
    fn code(&self) -> ErrorCode {
        match self {
            ScreenError::AllInUse => ErrorCode::Exhausted,
            _ => ErrorCode::Unavailable,
        }
    }
}

/// What Xvnc said last, on one line, for an error message. Called once it
/// has exited, so its last words may still be in the pipe. X servers frame
/// their errors with bare `(EE)` lines; those carry nothing.
async fn said(xvnc: &Supervised) -> String {
    let tail = xvnc
        .last_words(XVNC_OUTPUT_LINES * 2, Duration::from_secs(1))
        .await;
    let lines: Vec<&str> = tail
        .lines()
        .map(|line| line.trim_start_matches("(EE)").trim())
        .filter(|line| !line.is_empty())
        .collect();
    match &lines[lines.len().saturating_sub(XVNC_OUTPUT_LINES)..] {
        [] => "nothing".to_string(),
        kept => kept.join(" | "),
    }
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
    /// What runs beside each screen (the DevTools bridges, then the
    /// browsers), stopped in this order before a screen's display closes.
    pub companions: Vec<Arc<dyn Companion>>,
    /// Variables for Fluxbox and so for what its menu starts (the launcher).
    pub env: Vec<(String, String)>,
}

/// The X side of a screen, owned by its X thread, which runs one job on it
/// at a time (see [`Screen::with_x`]).
pub struct ScreenX {
    pub display: Display,
    pub capturer: Capturer,
    /// The last scaled frame, redone where the next grab drew.
    pub rescaler: Rescaler,
    pub input: Input,
}

pub struct Screen {
    pub number: ScreenNumber,
    /// The X display number, `:display_base + number`.
    pub display_number: u32,
    pub rfb_port: u16,
    pub size: ScreenSize,
    x: XThread,
    xvnc: Supervised,
    window_manager: Supervised,
    /// Set once Fluxbox has drawn the desktop; until then the screen is
    /// not handed out.
    drawn: tokio::sync::OnceCell<()>,
    /// The screen's session and AT-SPI buses, or why they did not start.
    a11y: Result<A11yBus, A11yError>,
    /// Held until the processes are gone, so the number is not reused early.
    slot: Mutex<Option<ScreenSlot>>,
    companions: Vec<Arc<dyn Companion>>,
    /// The X connection `computer_act` watches its effects on, kept
    /// between batches (opening one costs more than a batch's watch).
    watch: Mutex<Option<WatchConnection>>,
    /// The items of Fluxbox's own menus, read from its settings once.
    wm_menus: Arc<WmMenus>,
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
    /// Opens a screen on the lowest free number whose display works. A
    /// number whose display fails to start is skipped for a while (see
    /// [`ScreenPool`]) and the next one is tried.
    pub async fn open_on_free_number(
        pool: &Arc<ScreenPool>,
        size: ScreenSize,
        paths: &ScreenPaths,
    ) -> Result<Screen, ScreenError> {
        let started = Instant::now();
        let mut last_failure = None;
        loop {
            let slot = match pool.reserve() {
                Ok(slot) => slot,
                Err(none) => {
                    return Err(match last_failure {
                        Some(failure) => failure,
                        None if none.failing == 0 => ScreenError::AllInUse,
                        None => ScreenError::NoWorkingDisplay {
                            in_use: none.in_use,
                            failing: none.failing,
                        },
                    })
                }
            };
            match Screen::open(slot, size, paths).await {
                // Quick failures (a held display, a taken port) go on
                // through every number; slow ones (no X connection in 10 s)
                // say something is wrong beyond one display, and the call
                // must end some time.
                Err(e) if e.is_display_fault() && started.elapsed() < XVNC_READY_WAIT => {
                    tracing::warn!("{e}; trying the next screen number");
                    last_failure = Some(e);
                }
                done => return done,
            }
        }
    }

    /// Starts Xvnc and Fluxbox for `slot` and connects to the display. When
    /// the display fails to start, the number is marked failing.
    pub async fn open(
        slot: ScreenSlot,
        size: ScreenSize,
        paths: &ScreenPaths,
    ) -> Result<Screen, ScreenError> {
        let opened = Screen::start(&slot, size, paths).await;
        match opened {
            Ok((display, xvnc)) => Screen::finish_open(slot, size, paths, display, xvnc).await,
            Err(e) => {
                if e.is_display_fault() {
                    slot.mark_failing();
                }
                Err(e)
            }
        }
    }

    /// Xvnc running on the slot's display, and a connection to it.
    async fn start(
        slot: &ScreenSlot,
        size: ScreenSize,
        paths: &ScreenPaths,
    ) -> Result<(Display, Supervised), ScreenError> {
        let number = slot.number;
        let display_number = paths.display_base + u32::from(number.0);
        let rfb_port = paths.rfb_port_base + u16::from(number.0);
        ensure_socket_dir().map_err(|source| ScreenError::SocketDir { source })?;
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
        let started = Instant::now();
        let exited = |output: String, status: String| ScreenError::XvncExited {
            screen: number,
            display: display_number,
            rfb_port,
            status,
            output,
        };
        loop {
            if let Some(status) = xvnc.exit_status() {
                return Err(exited(said(&xvnc).await, status));
            }
            let attempt =
                tokio::task::spawn_blocking(move || Display::connect_once(display_number))
                    .await
                    .expect("display connect task does not panic");
            match attempt {
                Ok(display) if lock_owner(display_number) == Some(xvnc.pid) => {
                    return Ok((display, xvnc));
                }
                Ok(_) => {
                    // Another server took the display between the lock check
                    // and Xvnc's start, and answered on the same socket; ours
                    // then exits on its own, saying why.
                    if let Some(status) = xvnc.wait_exit(Duration::from_secs(1)).await {
                        return Err(exited(said(&xvnc).await, status));
                    }
                    let owner = lock_owner(display_number).unwrap_or(0);
                    xvnc.stop(Duration::from_secs(2)).await;
                    return Err(ScreenError::DisplayTaken {
                        display: display_number,
                        pid: owner,
                    });
                }
                Err(e) if started.elapsed() >= XVNC_READY_WAIT => {
                    xvnc.stop(Duration::from_secs(2)).await;
                    return Err(ScreenError::NoConnection {
                        screen: number,
                        display: display_number,
                        waited: started.elapsed(),
                        last: e.to_string(),
                        output: said(&xvnc).await,
                    });
                }
                Err(_) => {
                    // Retry soon, at once when Xvnc exits: the loop then
                    // reports its exit and its own words.
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(20)) => {}
                        () = xvnc.exited() => {}
                    }
                }
            }
        }
    }

    /// Input, capture and Fluxbox for a display that accepts connections.
    async fn finish_open(
        slot: ScreenSlot,
        size: ScreenSize,
        paths: &ScreenPaths,
        display: Display,
        xvnc: Supervised,
    ) -> Result<Screen, ScreenError> {
        let number = slot.number;
        let display_number = display.number;
        let rfb_port = paths.rfb_port_base + u16::from(number.0);
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
        // Before anything on the screen can start a shell program.
        if let Some(auth) = crate::x_auth::installed() {
            if let Err(e) = auth.make_agent_cookie(&display.conn, display_number) {
                tracing::error!(screen = %number, "the shell gets no X access on this screen: {e}");
            }
        }
        let capturer = Capturer::new(&display);
        // Before Fluxbox, whose menu starts apps with the screen's bus. A
        // screen without one still works; its text view says why it has
        // no trees.
        let a11y = A11yBus::start(display_number).await.inspect_err(|e| {
            tracing::warn!(screen = %number, "no accessibility bus: {e}");
        });
        let screen_env = ScreenEnv {
            display: display_number,
            session_bus: a11y.is_ok(),
        };
        // Fluxbox draws the desktop an agent's first look must show, so a
        // screen without it is not handed out.
        let window_manager = match Supervised::spawn(
            "fluxbox",
            fluxbox_command(screen_env, &paths.home, &paths.fluxbox_dir, &paths.env),
        ) {
            Ok(wm) => wm,
            Err(source) => {
                if let Ok(a11y) = &a11y {
                    a11y.stop().await;
                }
                xvnc.stop(Duration::from_secs(2)).await;
                return Err(ScreenError::Spawn {
                    program: "fluxbox",
                    screen: number,
                    source,
                });
            }
        };
        let x = match XThread::start(
            number,
            ScreenX {
                display,
                capturer,
                rescaler: Rescaler::default(),
                input,
            },
        ) {
            Ok(x) => x,
            Err(source) => {
                window_manager.stop(Duration::from_secs(1)).await;
                if let Ok(a11y) = &a11y {
                    a11y.stop().await;
                }
                xvnc.stop(Duration::from_secs(2)).await;
                return Err(ScreenError::XThread {
                    screen: number,
                    source,
                });
            }
        };
        tracing::info!(screen = %number, display = display_number, rfb_port, %size, "screen opened");
        Ok(Screen {
            number,
            display_number,
            rfb_port,
            size,
            x,
            watch: Mutex::new(None),
            xvnc,
            window_manager,
            drawn: tokio::sync::OnceCell::new(),
            a11y,
            slot: Mutex::new(Some(slot)),
            companions: paths.companions.clone(),
            wm_menus: Arc::new(WmMenus::read(&paths.fluxbox_dir)),
        })
    }

    /// Returns once Fluxbox has drawn the desktop: at once after the first
    /// time, so only a screen's opening waits. Several callers share one
    /// wait; a failed wait is not remembered, so the next call waits again.
    pub async fn wait_until_drawn(self: &Arc<Self>) -> Result<(), ScreenError> {
        self.drawn
            .get_or_try_init(|| self.watch_until_drawn())
            .await
            .map(|_| ())
    }

    async fn watch_until_drawn(self: &Arc<Self>) -> Result<(), ScreenError> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.window_manager.exit_status() {
                return Err(ScreenError::WindowManagerExited {
                    screen: self.number,
                    status,
                });
            }
            let looked = self.with_x(|x| desktop_not_drawn(&x.display)).await?;
            let missing = match looked {
                Ok(None) => {
                    tracing::info!(screen = %self.number, waited = ?started.elapsed(), "desktop drawn");
                    return Ok(());
                }
                Ok(Some(missing)) => missing.to_string(),
                Err(e) => format!("its root window could not be read ({e})"),
            };
            if started.elapsed() >= DESKTOP_DRAWN_WAIT {
                return Err(ScreenError::NotDrawn {
                    screen: self.number,
                    waited: started.elapsed(),
                    missing,
                });
            }
            tokio::select! {
                () = tokio::time::sleep(DESKTOP_DRAWN_POLL) => {}
                () = self.window_manager.exited() => {}
            }
        }
    }

    /// Runs `f` with the X side of the screen, on the screen's X thread,
    /// after the jobs sent before it. Fails once Xvnc has died.
    pub async fn with_x<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut ScreenX) -> T + Send + 'static,
    ) -> Result<T, ScreenError> {
        self.check_alive()?;
        Ok(self.x.run(f).await)
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

    /// The environment every process started on this screen gets.
    pub fn env(&self) -> ScreenEnv {
        ScreenEnv {
            display: self.display_number,
            session_bus: self.a11y.is_ok(),
        }
    }

    /// What the window manager's menus hold, for the text view and effects.
    pub fn wm_menus(&self) -> Arc<WmMenus> {
        Arc::clone(&self.wm_menus)
    }

    /// The screen's accessibility bus, or why it has none.
    pub fn a11y(&self) -> Result<&A11yBus, &A11yError> {
        self.a11y.as_ref()
    }

    /// Stops Fluxbox and Xvnc, then frees the number. Runs in a task of its
    /// own, so a caller that is dropped half way (a request cut short)
    /// cannot leave Xvnc running with its number freed.
    pub async fn close(self: &Arc<Self>) {
        let screen = Arc::clone(self);
        // Only fails when the runtime shuts down; `Drop` then kills.
        let _ = tokio::spawn(async move { screen.close_now().await }).await;
    }

    /// The watch connection kept from the last batch, if any; give it back
    /// with [`Screen::return_watch`]. A batch that finds none (the first,
    /// or a second at the same time) opens one with `WatchConnection::open`
    /// on the X thread.
    pub fn take_watch(&self) -> Option<WatchConnection> {
        self.watch.lock().take()
    }

    pub fn return_watch(&self, conn: WatchConnection) {
        *self.watch.lock() = Some(conn);
    }

    /// Xvnc's process id.
    pub fn xvnc_pid(&self) -> i32 {
        self.xvnc.pid
    }

    async fn close_now(&self) {
        // The companions first, while the display is there: the browser
        // saves its profile and its last cookies while it can still draw.
        for companion in &self.companions {
            companion.stop_for(self.number).await;
        }
        self.window_manager.stop(Duration::from_secs(1)).await;
        if let Ok(a11y) = &self.a11y {
            a11y.stop().await;
        }
        self.xvnc.stop(Duration::from_secs(3)).await;
        let slot = self.slot.lock().take();
        if slot.is_some() {
            tracing::info!(screen = %self.number, "screen closed");
        }
    }
}

impl Drop for Screen {
    /// The fallback when `close` did not finish: kill both processes and
    /// keep the number until Xvnc has exited, so it is not reused while the
    /// old server still holds the display.
    fn drop(&mut self) {
        let Some(slot) = self.slot.get_mut().take() else {
            return;
        };
        tracing::warn!(screen = %self.number, "screen dropped without close; killing its Xvnc and Fluxbox");
        self.window_manager.kill();
        self.xvnc.kill();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let exited = self.xvnc.exited();
            runtime.spawn(async move {
                let _ = tokio::time::timeout(Duration::from_secs(5), exited).await;
                drop(slot);
            });
        }
    }
}
