//! Doing what `open_path`, `launch_app`, the `focus` action and the
//! screen's menu ask: pages go to the screen's Chromium, other apps are
//! started detached on the screen (or their window raised), and each call
//! waits until what it opened is there or its deadline passed.
//!
//! X work uses a connection of its own per call, never the screen's shared
//! one: `focus` runs inside an act batch that holds that connection.

use super::resolve::{check_uri, resolve, window_hint, AppSpec};
use super::target::{browser_page, classify, file_url, FileKind, OpenTarget};
use super::{desktop_entry, AppError};
use crate::browser::{BrowserError, BrowserScreen, Browsers};
use crate::display::Display;
use crate::screen_facts::ScreenEnv;
use crate::windows::{focus_window, wait_for_window, window_list};
use computer_protocol::{Coded, ErrorCode};
use std::collections::HashSet;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a started app may take to show a window.
pub const WINDOW_WAIT: Duration = Duration::from_secs(20);
/// How long a page may take to load before the screenshot is taken anyway.
pub const PAGE_WAIT: Duration = Duration::from_secs(15);
/// The browser's window class (and the start of its title's owner).
const BROWSER_CLASS: &str = "chromium";
const TERMINAL_CLASS: &str = "xterm";

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(transparent)]
    App(#[from] AppError),
    #[error(transparent)]
    Browser(#[from] BrowserError),
    #[error("could not start `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("screen :{display} cannot be reached: {reason}")]
    Screen { display: u32, reason: String },
    #[error(transparent)]
    X(#[from] crate::display::XFault),
}

/// Why a `focus` that matched no window could not start its target either.
#[derive(Debug, thiserror::Error)]
pub enum FocusError {
    /// Started, but its window did not show in time; the summary says so.
    #[error("{summary}")]
    NotReady { summary: String },
    #[error("no window matches `{target}`, and {source}")]
    Launch {
        target: String,
        #[source]
        source: LaunchError,
    },
}

impl Coded for LaunchError {
    fn code(&self) -> ErrorCode {
        match self {
            LaunchError::App(e) => e.code(),
            LaunchError::Browser(_)
            | LaunchError::Spawn { .. }
            | LaunchError::Screen { .. }
            | LaunchError::X(_) => ErrorCode::Unavailable,
        }
    }
}

/// What opened, for the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    pub summary: String,
    /// The page loaded or the window showed in time.
    pub ready: bool,
}

/// The screen something opens on, and where relative paths start.
#[derive(Debug, Clone)]
pub struct OnScreen {
    pub screen: BrowserScreen,
    pub cwd: PathBuf,
}

/// Opens apps and pages; one per computerd.
#[derive(Debug)]
pub struct Launcher {
    pub browsers: Arc<Browsers>,
    pub home: PathBuf,
    /// Variables every started app gets (the launcher's own address, so a
    /// link an app opens lands on the same screen).
    pub env: Vec<(String, String)>,
}

impl Launcher {
    /// `launch_app`: the app's window raised when one is open (and no
    /// `uri` asks for more), otherwise the app started and its window
    /// awaited.
    pub async fn launch(
        &self,
        on: &OnScreen,
        app: &str,
        uri: Option<&str>,
    ) -> Result<Opened, LaunchError> {
        // A uri is one argument of the app's command line: one that looks
        // like an option could change what the app runs.
        let uri = uri.map(check_uri).transpose()?;
        let dirs = desktop_entry::default_dirs(&self.home);
        let path_var = std::env::var_os("PATH");
        let spec = resolve(app, &dirs, path_var.as_deref())?;
        match spec {
            AppSpec::Browser => {
                // The same rule as `open_path`: no `javascript:`, `file:`
                // or `chrome:` links, whoever sends them.
                let page = uri
                    .map(|uri| browser_page(uri, &on.cwd, &self.home))
                    .transpose()?;
                self.browser(on, page.as_deref()).await
            }
            AppSpec::Terminal => {
                let argv = terminal_command();
                self.program(on, "the terminal", argv, Some(TERMINAL_CLASS.into()), false)
                    .await
            }
            other => {
                let hint = window_hint(&other);
                let (what, argv) = match &other {
                    AppSpec::Entry(entry) => (format!("`{}`", entry.name), entry.command(uri)),
                    AppSpec::Program(path) => {
                        let mut argv = vec![path.display().to_string()];
                        argv.extend(uri.map(str::to_string));
                        (format!("`{}`", path.display()), argv)
                    }
                    AppSpec::Browser | AppSpec::Terminal => unreachable!("handled above"),
                };
                self.program(on, &what, argv, hint, uri.is_some()).await
            }
        }
    }

    /// `open_path`: a URL or a page-like file in the screen's Chromium,
    /// other files with `xdg-open`.
    pub async fn open_path(&self, on: &OnScreen, target: &str) -> Result<Opened, LaunchError> {
        match classify(target, &on.cwd, &self.home)? {
            OpenTarget::Web { url } => self.browser(on, Some(&url)).await,
            OpenTarget::File {
                path,
                kind: FileKind::Browser,
            } => self.browser(on, Some(&file_url(&path))).await,
            OpenTarget::File {
                path,
                kind: FileKind::XdgOpen,
            } => {
                let argv = vec!["xdg-open".to_string(), path.display().to_string()];
                let what = format!("`{}` with its default app (xdg-open)", path.display());
                self.program(on, &what, argv, None, true).await
            }
        }
    }

    /// The `focus` action when no window matches `target`: starts it as
    /// `launch_app` would.
    pub async fn focus_or_launch(&self, on: &OnScreen, target: &str) -> Result<(), FocusError> {
        match self.launch(on, target, None).await {
            Ok(opened) if opened.ready => Ok(()),
            Ok(opened) => Err(FocusError::NotReady {
                summary: opened.summary,
            }),
            Err(source) => Err(FocusError::Launch {
                target: target.to_string(),
                source,
            }),
        }
    }

    /// The screen's Chromium, started when needed, raised, with `uri` in
    /// its first blank tab or a new one.
    async fn browser(&self, on: &OnScreen, uri: Option<&str>) -> Result<Opened, LaunchError> {
        let started = Instant::now();
        let (browser, new) = self.browsers.ensure(on.screen).await?;
        let display = on.screen.display;
        let shown = x(display, |d| {
            Ok(wait_for_window(d, BROWSER_CLASS, None, WINDOW_WAIT)?)
        })
        .await?;
        if !shown {
            return Err(LaunchError::Screen {
                display,
                reason: format!(
                    "Chromium started (pid {}, DevTools on 127.0.0.1:{}) but showed no window within {}s; end the session and start a new one, or look at `ps aux | grep chromium` with the shell tool",
                    browser.pid(),
                    browser.devtools_port(),
                    WINDOW_WAIT.as_secs()
                ),
            });
        }
        let how = if new { "started" } else { "already running" };
        let Some(uri) = uri else {
            x(display, |d| Ok(focus_window(d, BROWSER_CLASS)?)).await?;
            return Ok(Opened {
                summary: format!(
                    "The browser {how} on screen {} in {} ms.",
                    on.screen.number,
                    started.elapsed().as_millis()
                ),
                ready: true,
            });
        };
        let load = browser.open(uri, PAGE_WAIT).await?;
        x(display, |d| Ok(focus_window(d, BROWSER_CLASS)?)).await?;
        let summary = if load.loaded && load.painted {
            format!(
                "Opened {uri} in the browser on screen {} ({how}); the page loaded in {} ms.",
                on.screen.number,
                started.elapsed().as_millis()
            )
        } else if load.loaded {
            format!(
                "Opened {uri} in the browser on screen {} ({how}); the page loaded, but the browser had not drawn it after {} ms, so this screenshot may show the screen before it: observe again to see it.",
                on.screen.number,
                started.elapsed().as_millis()
            )
        } else {
            format!(
                "Opened {uri} in the browser on screen {} ({how}); the page was still loading after {} s, so this screenshot may show it unfinished: observe again to see it.",
                on.screen.number,
                PAGE_WAIT.as_secs()
            )
        };
        Ok(Opened {
            summary,
            ready: load.loaded,
        })
    }

    /// Raises the window of `hint` when one is open and `always_start` is
    /// false; otherwise runs `argv` detached on the screen and waits for a
    /// new window (or one matching `hint`).
    async fn program(
        &self,
        on: &OnScreen,
        what: &str,
        argv: Vec<String>,
        hint: Option<String>,
        always_start: bool,
    ) -> Result<Opened, LaunchError> {
        let display = on.screen.display;
        let number = on.screen.number;
        if !always_start {
            if let Some(hint) = hint.clone() {
                if x(display, move |d| Ok(focus_window(d, &hint)?)).await? {
                    return Ok(Opened {
                        summary: format!("Raised the open window of {what} on screen {number}."),
                        ready: true,
                    });
                }
            }
        }
        let before: HashSet<u32> =
            x(display, |d| Ok(window_list(d)?.into_iter().collect())).await?;
        let started = Instant::now();
        spawn_detached(&argv, on.screen.env, &self.home, &on.cwd, &self.env)?;
        let wanted = hint.clone().unwrap_or_default();
        let shown = x(display, move |d| {
            Ok(wait_for_window(d, &wanted, Some(&before), WINDOW_WAIT)?)
        })
        .await?;
        Ok(if shown {
            Opened {
                summary: format!(
                    "Started {what} on screen {number}; its window showed in {} ms.",
                    started.elapsed().as_millis()
                ),
                ready: true,
            }
        } else {
            Opened {
                summary: format!(
                    "Started {what} on screen {number}, but no new window showed within {} s; it may still be starting, may have opened in a window that was already there, or may have failed: observe again, or run it with the shell tool to see its output.",
                    WINDOW_WAIT.as_secs()
                ),
                ready: false,
            }
        })
    }
}

/// The terminal every screen offers.
fn terminal_command() -> Vec<String> {
    ["xterm", "-fa", "DejaVu Sans Mono", "-fs", "11"]
        .into_iter()
        .map(str::to_string)
        .collect()
}

impl Launcher {
    /// Starts `argv` on `on`'s screen as a desktop program (the screen's
    /// environment, so the desktop's X cookie), detached.
    pub fn run_detached(&self, on: &OnScreen, argv: &[String]) -> Result<(), LaunchError> {
        spawn_detached(argv, on.screen.env, &self.home, &on.cwd, &self.env)
    }
}

/// Runs `argv` on `screen` in a process group of its own, detached from
/// computerd: it outlives the request, and is reaped by a thread (or by
/// tini once computerd is gone).
fn spawn_detached(
    argv: &[String],
    screen: ScreenEnv,
    home: &Path,
    cwd: &Path,
    env: &[(String, String)],
) -> Result<(), LaunchError> {
    let (program, args) = argv.split_first().ok_or_else(|| LaunchError::Spawn {
        program: String::new(),
        source: std::io::Error::other("the command line is empty"),
    })?;
    let dir = if cwd.is_dir() { cwd } else { home };
    let mut command = Command::new(program);
    screen.apply_std(&mut command);
    let mut child = command
        .args(args)
        .env("HOME", home)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|source| LaunchError::Spawn {
            program: program.clone(),
            source,
        })?;
    std::thread::spawn(move || child.wait());
    Ok(())
}

/// Runs blocking X work on a connection of its own to `:display`.
async fn x<T: Send + 'static>(
    display: u32,
    f: impl FnOnce(&Display) -> Result<T, LaunchError> + Send + 'static,
) -> Result<T, LaunchError> {
    crate::blocking::run(move || {
        let connection = Display::connect_once(display).map_err(|e| LaunchError::Screen {
            display,
            reason: e.to_string(),
        })?;
        f(&connection)
    })
    .await
}
