//! The DevTools bridge of each screen's browser: `chrome-devtools-mcp`
//! attached to the screen's Chromium (never a browser of its own), kept
//! running by an `mcpc` bridge named `@cdt-N`, so the agent calls its tools
//! through `shell` with `mcpc @cdt-N tools-call <tool> '<json>'`.
//!
//! # Layout
//! - [`mcpc`]: running `mcpc` with deadlines, its session list and its
//!   bridge log (the time of the last call).
//! - this file: starting, reusing and stopping bridges, and stopping idle
//!   ones.
//!
//! A bridge stopped for being idle keeps its `mcpc` session: the next
//! `mcpc @cdt-N ...` call starts it again by itself, and the pages, which
//! live in Chromium, are still there. `stop_chrome_devtools` and the end of
//! the session close the `mcpc` session too.

pub mod mcpc;

use crate::browser::{BrowserError, BrowserScreen, Browsers};
use computer_protocol::{DevToolsStarted, DevToolsStopped, ErrorCode, ScreenNumber};
use mcpc::{Mcpc, McpcError, COMMAND_DEADLINE, CONNECT_DEADLINE};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use time::OffsetDateTime;

/// How often running bridges are checked for idleness.
const IDLE_CHECK_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug, thiserror::Error)]
pub enum DevToolsError {
    #[error(transparent)]
    Browser(#[from] BrowserError),
    #[error("the DevTools bridge of screen {screen} did not start: {source}")]
    Mcpc {
        screen: ScreenNumber,
        source: McpcError,
    },
    #[error("could not write the DevTools bridge's settings `{}`: {source}", path.display())]
    Config {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl DevToolsError {
    pub fn code(&self) -> ErrorCode {
        ErrorCode::Unavailable
    }
}

/// What computerd knows of one screen's bridge.
#[derive(Debug, Clone)]
struct Bridge {
    /// The browser it is attached to; a new browser needs a new bridge.
    browser_pid: i32,
    idle: Duration,
    /// When it was (re)started by computerd; calls count from here too.
    started: OffsetDateTime,
    /// The bridge process last seen running, and when it was first seen:
    /// one that `mcpc` just started again has not logged its first call
    /// yet, and must not be taken for idle meanwhile.
    seen: Option<(i32, OffsetDateTime)>,
}

/// Every screen's bridge.
#[derive(Debug)]
pub struct DevTools {
    mcpc: Mcpc,
    bridges: Mutex<HashMap<ScreenNumber, Bridge>>,
    /// One start or stop at a time per computerd: they are rare, and two
    /// `mcpc connect`s at once would race on mcpc's session list.
    busy: tokio::sync::Mutex<()>,
}

/// `@cdt-N`.
pub fn bridge_name(number: ScreenNumber) -> String {
    format!("@cdt-{}", number.0)
}

impl DevTools {
    pub fn new(home: PathBuf, env: Vec<(String, String)>) -> DevTools {
        DevTools {
            mcpc: Mcpc { home, env },
            bridges: Mutex::default(),
            busy: tokio::sync::Mutex::new(()),
        }
    }

    /// Starts the screen's bridge (and its browser when none runs), or
    /// returns the one running.
    pub async fn start(
        &self,
        screen: BrowserScreen,
        browsers: &Browsers,
        idle: Duration,
    ) -> Result<DevToolsStarted, DevToolsError> {
        let _one_at_a_time = self.busy.lock().await;
        let number = screen.number;
        let name = bridge_name(number);
        let (browser, _) = browsers.ensure(screen).await?;
        let mcpc_failed = |source| DevToolsError::Mcpc {
            screen: number,
            source,
        };
        let known = self.bridge(number);
        let same_browser = known
            .as_ref()
            .is_some_and(|b| b.browser_pid == browser.pid());
        let state = if same_browser && self.mcpc.knows(&name) {
            if self.mcpc.bridge_pid(&name).is_some() {
                "already running"
            } else {
                // Stopped when idle or crashed: the listing below starts it.
                "restarted"
            }
        } else {
            let config = self.write_config(number, browser.devtools_port())?;
            // A session left from another browser or another run of
            // computerd points at a browser that is gone.
            let _ = self
                .mcpc
                .run(&["close", &name], COMMAND_DEADLINE, &name)
                .await;
            let entry = format!("{}:cdt-{}", config.display(), number.0);
            self.mcpc
                .run(&["connect", &entry, &name], CONNECT_DEADLINE, &name)
                .await
                .map_err(mcpc_failed)?;
            "started"
        };
        let listed = self
            .mcpc
            .run(&["--json", &name, "tools-list"], CONNECT_DEADLINE, &name)
            .await
            .map_err(mcpc_failed)?;
        let bridge = Bridge {
            browser_pid: browser.pid(),
            idle,
            started: OffsetDateTime::now_utc(),
            seen: None,
        };
        self.bridges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(number, bridge);
        tracing::info!(screen = %number, state, "DevTools bridge ready");
        Ok(DevToolsStarted {
            screen: number.0,
            bridge: name,
            state: state.to_string(),
            devtools_port: browser.devtools_port(),
            idle_stop_secs: idle.as_secs(),
            tools: mcpc::parse_tools(&listed),
        })
    }

    /// Stops the screen's bridge at once and forgets its `mcpc` session.
    pub async fn stop(&self, number: ScreenNumber) -> DevToolsStopped {
        let _one_at_a_time = self.busy.lock().await;
        let name = bridge_name(number);
        let known = self
            .bridges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&number)
            .is_some();
        let was_running = known && self.mcpc.bridge_pid(&name).is_some();
        if known || self.mcpc.knows(&name) {
            if let Err(e) = self
                .mcpc
                .run(&["close", &name], COMMAND_DEADLINE, &name)
                .await
            {
                tracing::warn!(screen = %number, "{e}");
            }
            // `close` ends the bridge; one that did not answer is killed.
            if let Some(pid) = self.mcpc.bridge_pid(&name) {
                kill_bridge(pid);
            }
            tracing::info!(screen = %number, "DevTools bridge stopped");
        }
        DevToolsStopped {
            bridge: name,
            was_running,
        }
    }

    /// Stops the bridge process of every bridge idle for longer than its
    /// limit, keeping its `mcpc` session so the next call restarts it.
    pub fn stop_idle(&self) {
        let mut bridges = self.bridges.lock().unwrap_or_else(|e| e.into_inner());
        let now = OffsetDateTime::now_utc();
        for (&number, bridge) in bridges.iter_mut() {
            let name = bridge_name(number);
            let Some(pid) = self.mcpc.bridge_pid(&name) else {
                continue;
            };
            let seen_since = match bridge.seen {
                Some((seen, since)) if seen == pid => since,
                _ => {
                    bridge.seen = Some((pid, now));
                    now
                }
            };
            let last = self
                .mcpc
                .last_call(&name)
                .map_or(bridge.started, |call| call.max(bridge.started))
                .max(seen_since);
            let quiet = (now - last).try_into().unwrap_or(Duration::ZERO);
            if quiet > bridge.idle {
                kill_bridge(pid);
                tracing::info!(screen = %number, idle = ?quiet, "DevTools bridge stopped after no calls; the next mcpc call starts it again");
            }
        }
    }

    fn bridge(&self, number: ScreenNumber) -> Option<Bridge> {
        self.bridges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&number)
            .cloned()
    }

    /// `~/.local/share/computer-use/devtools/cdt-N.json`: the MCP server
    /// `mcpc` runs for screen N, attached to its browser's DevTools.
    fn write_config(&self, number: ScreenNumber, port: u16) -> Result<PathBuf, DevToolsError> {
        let dir = self.mcpc.home.join(".local/share/computer-use/devtools");
        let path = dir.join(format!("cdt-{}.json", number.0));
        let config = serde_json::json!({
            "mcpServers": {
                format!("cdt-{}", number.0): {
                    "command": "chrome-devtools-mcp",
                    "args": [
                        format!("--browser-url=http://127.0.0.1:{port}"),
                        "--no-usage-statistics",
                        "--no-performance-crux",
                    ],
                    "env": { "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1" },
                }
            }
        });
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&path, format!("{config:#}\n")));
        written.map_err(|source| DevToolsError::Config {
            path: path.clone(),
            source,
        })?;
        Ok(path)
    }
}

/// Stops a bridge process and the `chrome-devtools-mcp` it runs, whose
/// memory is the point of stopping.
fn kill_bridge(pid: i32) {
    for child in children_of(pid) {
        // SAFETY: kill(2) on a pid read from /proc a moment ago; at worst
        // it is gone and the call fails.
        unsafe { libc::kill(child, libc::SIGTERM) };
    }
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGTERM) };
}

/// The processes whose parent is `pid`.
fn children_of(pid: i32) -> Vec<i32> {
    crate::process::process_table()
        .into_iter()
        .filter(|entry| entry.parent == pid)
        .map(|entry| entry.pid)
        .collect()
}

/// Checks for idle bridges until the task is aborted.
pub async fn run_idle_stop(devtools: Arc<DevTools>) {
    let mut tick = tokio::time::interval(IDLE_CHECK_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let devtools = Arc::clone(&devtools);
        let _ = tokio::task::spawn_blocking(move || devtools.stop_idle()).await;
    }
}
