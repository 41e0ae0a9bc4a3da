//! The DevTools bridge of each screen's browser: `chrome-devtools-mcp`
//! attached to the screen's Chromium (never a browser of its own), kept
//! running by an `mcpc` bridge named `@cdt-N`, so the agent calls its tools
//! through `shell` with `mcpc @cdt-N tools-call <tool> '<json>'`.
//!
//! # Layout
//! - [`mcpc`]: running `mcpc` with deadlines, its session list and its
//!   bridge log (the time of the last call).
//! - [`bridge_process`]: telling the bridge process from whatever got its
//!   pid after it exited.
//! - this file: starting, reusing and stopping bridges, and stopping idle
//!   ones.
//!
//! A bridge stopped for being idle keeps its `mcpc` session: the next
//! `mcpc @cdt-N ...` call starts it again by itself, and the pages, which
//! live in Chromium, are still there. `stop_chrome_devtools` and the end of
//! the session close the `mcpc` session too.
//!
//! computerd signals only a process it identified as the bridge (pid, start
//! time and command line, [`bridge_process`]): `mcpc`'s session list keeps
//! the pid of a bridge that exited, and once pids wrap around that pid may
//! be another agent's process.

pub mod bridge_process;
pub mod mcpc;

use crate::browser::{BrowserError, BrowserScreen, Browsers};
use crate::screens::Companion;
use bridge_process::BridgeProcess;
use computer_protocol::{Coded, DevToolsStarted, DevToolsStopped, ErrorCode, ScreenNumber};
use mcpc::{Mcpc, McpcError, COMMAND_DEADLINE, CONNECT_DEADLINE};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
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

impl Coded for DevToolsError {
    fn code(&self) -> ErrorCode {
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
    /// yet, and must not be taken for idle meanwhile. Dropped when the
    /// idle stop ends it; the next one `mcpc` starts is learnt afresh.
    seen: Option<(BridgeProcess, OffsetDateTime)>,
}

/// Every screen's bridge.
#[derive(Debug)]
pub struct DevTools {
    mcpc: Mcpc,
    bridges: Mutex<HashMap<ScreenNumber, Bridge>>,
    /// One start or stop at a time per screen. A start may wait a minute
    /// for `mcpc connect`; another screen's stop (its screen closing, its
    /// session ending) must not wait for it.
    screens: Mutex<HashMap<ScreenNumber, Arc<tokio::sync::Mutex<()>>>>,
    /// `mcpc connect` and `close` one at a time: each rewrites mcpc's
    /// session list, and two at once could lose one's change.
    session_list: Arc<tokio::sync::Mutex<()>>,
    /// This `DevTools` itself, for a `close` left to the background.
    me: std::sync::Weak<DevTools>,
}

/// `@cdt-N`.
pub fn bridge_name(number: ScreenNumber) -> String {
    format!("@cdt-{}", number.0)
}

impl DevTools {
    pub fn new(home: PathBuf, env: Vec<(String, String)>) -> Arc<DevTools> {
        Arc::new_cyclic(|me| DevTools {
            mcpc: Mcpc { home, env },
            bridges: Mutex::default(),
            screens: Mutex::default(),
            session_list: Arc::default(),
            me: me.clone(),
        })
    }

    /// The lock of screen `number`'s starts and stops.
    fn screen_lock(&self, number: ScreenNumber) -> Arc<tokio::sync::Mutex<()>> {
        Arc::clone(self.screens.lock().entry(number).or_default())
    }

    /// Starts the screen's bridge (and its browser when none runs), or
    /// returns the one running.
    pub async fn start(
        &self,
        screen: BrowserScreen,
        browsers: &Browsers,
        idle: Duration,
    ) -> Result<DevToolsStarted, DevToolsError> {
        let number = screen.number;
        let screen_lock = self.screen_lock(number);
        let _one_at_a_time = screen_lock.lock().await;
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
            if self.mcpc.bridge_process(&name).is_some() {
                "already running"
            } else {
                // Stopped when idle or crashed: the listing below starts it.
                "restarted"
            }
        } else {
            let config = self.write_config(number, browser.devtools_port())?;
            let _list = self.session_list.lock().await;
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
        self.bridges.lock().insert(number, bridge);
        tracing::info!(screen = %number, state, "DevTools bridge ready");
        Ok(DevToolsStarted {
            screen: number,
            bridge: name,
            state: state.to_string(),
            devtools_port: browser.devtools_port(),
            idle_stop_secs: idle.as_secs(),
            tools: mcpc::parse_tools(&listed),
        })
    }

    /// Stops the screen's bridge at once and forgets its `mcpc` session.
    /// The bridge process is ended here; the session's `mcpc close` waits
    /// its turn at mcpc's session list in the background when another
    /// screen's bridge is starting, so a closing screen never waits a
    /// minute for another screen's `mcpc connect`.
    pub async fn stop(&self, number: ScreenNumber) -> DevToolsStopped {
        let screen_lock = self.screen_lock(number);
        let _one_at_a_time = screen_lock.lock().await;
        let name = bridge_name(number);
        let known = self.bridges.lock().remove(&number).is_some();
        let process = self.mcpc.bridge_process(&name);
        let was_running = known && process.is_some();
        if known || self.mcpc.knows(&name) {
            // `close` would end the bridge too; ending it first makes the
            // stop immediate whatever `close` waits for.
            if let Some(process) = process {
                kill_bridge(process);
            }
            match Arc::clone(&self.session_list).try_lock_owned() {
                Ok(list) => self.close_session(&name, list).await,
                Err(_) => {
                    if let Some(devtools) = self.me.upgrade() {
                        tokio::spawn(async move { devtools.close_later(number).await });
                    }
                }
            }
            tracing::info!(screen = %number, "DevTools bridge stopped");
        }
        DevToolsStopped {
            bridge: name,
            was_running,
        }
    }

    /// `mcpc close` of `name`'s session, holding the session list.
    async fn close_session(&self, name: &str, list: tokio::sync::OwnedMutexGuard<()>) {
        if let Err(e) = self
            .mcpc
            .run(&["close", name], COMMAND_DEADLINE, name)
            .await
        {
            tracing::warn!(bridge = name, "{e}");
        }
        // A bridge `mcpc` started again meanwhile is ended too.
        if let Some(process) = self.mcpc.bridge_process(name) {
            kill_bridge(process);
        }
        drop(list);
    }

    /// Closes screen `number`'s `mcpc` session once the session list is
    /// free, unless a new bridge started on the screen meanwhile.
    async fn close_later(&self, number: ScreenNumber) {
        let screen_lock = self.screen_lock(number);
        let _screen = screen_lock.lock().await;
        let list = Arc::clone(&self.session_list).lock_owned().await;
        if self.bridges.lock().contains_key(&number) {
            return;
        }
        self.close_session(&bridge_name(number), list).await;
    }

    /// Stops the bridge process of every bridge idle for longer than its
    /// limit, keeping its `mcpc` session so the next call restarts it.
    pub fn stop_idle(&self) {
        let mut bridges = self.bridges.lock();
        let now = OffsetDateTime::now_utc();
        for (&number, bridge) in bridges.iter_mut() {
            let name = bridge_name(number);
            // Only a process that runs this bridge counts: mcpc's list
            // keeps the pid of a bridge that exited.
            let Some(process) = self.mcpc.bridge_process(&name) else {
                bridge.seen = None;
                continue;
            };
            let seen_since = match bridge.seen {
                Some((seen, since)) if seen == process => since,
                _ => {
                    bridge.seen = Some((process, now));
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
                kill_bridge(process);
                bridge.seen = None;
                tracing::info!(screen = %number, idle = ?quiet, "DevTools bridge stopped after no calls; the next mcpc call starts it again");
            }
        }
    }

    fn bridge(&self, number: ScreenNumber) -> Option<Bridge> {
        self.bridges.lock().get(&number).cloned()
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
/// memory is the point of stopping; nothing when the process is no longer
/// the bridge identified.
fn kill_bridge(bridge: BridgeProcess) {
    if !bridge.is_alive() {
        return;
    }
    let pid = bridge.pid;
    for child in children_of(pid) {
        // SAFETY: kill(2) on a child of the bridge, read from /proc a
        // moment ago; at worst it is gone and the call fails.
        unsafe { libc::kill(child, libc::SIGTERM) };
    }
    // SAFETY: as above; the pid was the bridge's (same start time) just
    // now.
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

/// A screen stops its bridge first: the bridge uses the browser.
impl Companion for DevTools {
    fn stop_for(&self, number: ScreenNumber) -> futures::future::BoxFuture<'_, ()> {
        Box::pin(async move {
            self.stop(number).await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command};

    /// A temporary home whose `~/.mcpc/sessions.json` says `@cdt-N`'s
    /// bridge has `pid`, and a `DevTools` that knows that bridge with a
    /// 1 s idle limit.
    fn devtools_with_bridge(home: &std::path::Path, number: u8, pid: u32) -> Arc<DevTools> {
        let state = home.join(".mcpc");
        std::fs::create_dir_all(&state).unwrap();
        let sessions = serde_json::json!({
            "sessions": { bridge_name(ScreenNumber(number)): { "pid": pid } }
        });
        std::fs::write(state.join("sessions.json"), sessions.to_string()).unwrap();
        let devtools = DevTools::new(home.to_path_buf(), Vec::new());
        devtools.bridges.lock().insert(
            ScreenNumber(number),
            Bridge {
                browser_pid: 1,
                idle: Duration::from_secs(1),
                started: OffsetDateTime::now_utc() - time::Duration::seconds(5),
                seen: None,
            },
        );
        devtools
    }

    fn is_running(child: &mut Child) -> bool {
        child.try_wait().unwrap().is_none()
    }

    /// Waits up to `deadline` for the child to exit.
    fn exits_within(child: &mut Child, deadline: Duration) -> bool {
        let until = std::time::Instant::now() + deadline;
        while std::time::Instant::now() < until {
            if !is_running(child) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn the_idle_stop_leaves_a_process_that_is_not_the_bridge_alone() {
        // mcpc's session list names a pid that now belongs to someone
        // else's process (the bridge's pid was reused).
        let home = tempfile::tempdir().unwrap();
        let mut other = Command::new("sleep").arg("600").spawn().unwrap();
        let devtools = devtools_with_bridge(home.path(), 2, other.id());
        devtools.stop_idle();
        std::thread::sleep(Duration::from_millis(1100));
        devtools.stop_idle();
        let survived = !exits_within(&mut other, Duration::from_millis(300));
        let _ = other.kill();
        let _ = other.wait();
        assert!(
            survived,
            "stop_idle killed a process that is not the bridge"
        );
    }

    #[test]
    fn the_idle_stop_ends_the_bridge_and_learns_the_next_one() {
        let home = tempfile::tempdir().unwrap();
        // A stand-in with a bridge's command line: `sh -c` waiting in its
        // own `read` (a builtin, so killing it leaves no `sleep` behind
        // holding the test's output open), whose other arguments are
        // mcpc's bridge script and the bridge's name.
        let stand_in = || {
            let child = Command::new("sh")
                .args(["-c", "read -r line; :"])
                .stdin(std::process::Stdio::piped())
                .arg("/usr/lib/node_modules/@apify/mcpc/dist/bridge/index.js")
                .arg("@cdt-4")
                .spawn()
                .unwrap();
            // Until it has exec'd, /proc shows the test's own arguments.
            let until = std::time::Instant::now() + Duration::from_secs(5);
            while BridgeProcess::identify(child.id() as i32, "@cdt-4").is_none()
                && std::time::Instant::now() < until
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            child
        };
        let mut bridge = stand_in();
        let devtools = devtools_with_bridge(home.path(), 4, bridge.id());
        devtools.stop_idle();
        assert!(is_running(&mut bridge), "first seen just now");
        std::thread::sleep(Duration::from_millis(1100));
        devtools.stop_idle();
        assert!(
            exits_within(&mut bridge, Duration::from_secs(5)),
            "an idle bridge is stopped"
        );
        assert!(devtools.bridge(ScreenNumber(4)).unwrap().seen.is_none());

        // mcpc starts the bridge again on the next call: a new process,
        // seen afresh, so not idle at once.
        let mut next = stand_in();
        let sessions = serde_json::json!({"sessions": {"@cdt-4": {"pid": next.id()}}});
        std::fs::write(
            home.path().join(".mcpc/sessions.json"),
            sessions.to_string(),
        )
        .unwrap();
        devtools.stop_idle();
        let seen = devtools.bridge(ScreenNumber(4)).unwrap().seen;
        assert_eq!(seen.map(|(p, _)| p.pid), Some(next.id() as i32));
        assert!(is_running(&mut next));
        let _ = next.kill();
        let _ = next.wait();
    }
}
