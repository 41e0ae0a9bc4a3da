//! One Chromium process: its command line (every flag lives here), its
//! start until DevTools answers, and its close.

use super::cdp::{Cdp, CdpError};
use crate::process::{one_line, Supervised};
use crate::screen_facts::ScreenEnv;
use computer_protocol::ScreenSize;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::Command;

/// How long a new Chromium may take until its DevTools answer.
const DEVTOOLS_WAIT: Duration = Duration::from_secs(30);
/// How long a Chromium asked to close may take to save its profile.
const CLOSE_WAIT: Duration = Duration::from_secs(10);
/// Lines of Chromium's stderr quoted when it fails to start.
const OUTPUT_LINES: usize = 6;

#[derive(Debug, thiserror::Error)]
pub enum ChromiumError {
    #[error("could not start `chromium` for screen {screen}: {source}; install it with `apt-get install chromium`")]
    Spawn { screen: u8, source: std::io::Error },
    #[error("chromium of screen {screen} exited during start ({status}); it said: {output}")]
    Exited {
        screen: u8,
        status: String,
        output: String,
    },
    #[error("chromium of screen {screen} started (pid {pid}) but its DevTools on 127.0.0.1:{port} did not answer within {}s, so computerd stopped it; another program may hold the port (`ss -ltnp | grep {port}`); it said: {output}", waited.as_secs())]
    NoDevTools {
        screen: u8,
        pid: i32,
        port: u16,
        waited: Duration,
        output: String,
    },
    #[error("chromium of screen {screen}: {source}")]
    DevTools { screen: u8, source: CdpError },
}

/// What one Chromium needs.
pub struct ChromiumArgs<'a> {
    pub screen: u8,
    /// `DISPLAY` and the screen's session bus.
    pub screen_env: ScreenEnv,
    pub size: ScreenSize,
    pub user_data_dir: &'a Path,
    pub devtools_port: u16,
    pub home: &'a Path,
    /// Extra variables for the browser and what it starts (the launcher's
    /// address, so `xdg-open` from a download lands on this screen).
    pub env: &'a [(String, String)],
}

/// The command line. Why each flag:
/// - `--no-sandbox`: Docker's default seccomp profile blocks the user
///   namespaces Chromium's sandbox needs; the container is the boundary.
/// - `--disable-dev-shm-usage`: Docker's 64 MB `/dev/shm` makes tabs crash.
/// - `--user-data-dir`: a profile of its own, which also gives each screen
///   its own process (Chromium's singleton is per profile).
/// - `--remote-debugging-port`: DevTools on 127.0.0.1 only (Chromium's
///   default address) for cookie sync and the DevTools bridge.
/// - `--password-store=basic`: no desktop keyring here; without it
///   Chromium waits for one and saved passwords could not be copied to
///   the next profile.
/// - first-run, default-browser and crash-restore prompts would cover the
///   page an agent asked for.
pub fn chromium_command(args: &ChromiumArgs<'_>) -> Command {
    let mut cmd = Command::new("chromium");
    cmd.arg(format!("--user-data-dir={}", args.user_data_dir.display()))
        .arg(format!("--remote-debugging-port={}", args.devtools_port))
        .args([
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--password-store=basic",
            "--no-first-run",
            "--no-default-browser-check",
            "--hide-crash-restore-bubble",
            "--disable-features=ChromeWhatsNewUI",
            "--window-position=0,0",
        ])
        .arg(format!(
            "--window-size={},{}",
            args.size.width, args.size.height
        ))
        .arg("--start-maximized")
        .arg("about:blank");
    args.screen_env.apply(&mut cmd);
    cmd.env("HOME", args.home)
        .envs(args.env.iter().map(|(k, v)| (k, v)))
        .current_dir(args.home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // Kept in a tail that errors about the start quote.
        .stderr(Stdio::piped())
        // Its own group, so that its helper processes can be stopped with it.
        .process_group(0)
        .kill_on_drop(false);
    cmd
}

/// A running Chromium and the DevTools connection to it.
#[derive(Debug)]
pub struct Chromium {
    pub process: Supervised,
    pub cdp: Cdp,
    pub devtools_port: u16,
}

impl Chromium {
    /// Starts Chromium and connects to its DevTools.
    pub async fn start(args: &ChromiumArgs<'_>) -> Result<Chromium, ChromiumError> {
        let screen = args.screen;
        let process = Supervised::spawn("chromium", chromium_command(args))
            .map_err(|source| ChromiumError::Spawn { screen, source })?;
        let started = Instant::now();
        let url = loop {
            if let Some(status) = process.exit_status() {
                let output = process
                    .last_words(OUTPUT_LINES, Duration::from_secs(1))
                    .await;
                return Err(ChromiumError::Exited {
                    screen,
                    status,
                    output: one_line(&output),
                });
            }
            if let Some(url) = devtools_url(args.devtools_port).await {
                break url;
            }
            if started.elapsed() > DEVTOOLS_WAIT {
                let output = one_line(&process.stderr_tail(OUTPUT_LINES));
                stop_group(&process).await;
                return Err(ChromiumError::NoDevTools {
                    screen,
                    pid: process.pid,
                    port: args.devtools_port,
                    waited: DEVTOOLS_WAIT,
                    output,
                });
            }
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
                () = process.exited() => {}
            }
        };
        let cdp = match Cdp::connect(&url).await {
            Ok(cdp) => cdp,
            Err(source) => {
                stop_group(&process).await;
                return Err(ChromiumError::DevTools { screen, source });
            }
        };
        Ok(Chromium {
            process,
            cdp,
            devtools_port: args.devtools_port,
        })
    }

    /// Asks Chromium to close (it saves its profile), then stops what is
    /// left. Returns true when it closed by itself in time.
    pub async fn close(&self) -> bool {
        if self.process.exit_status().is_some() {
            return false;
        }
        let ask = self.cdp.call("Browser.close", serde_json::json!({}));
        let asked = tokio::time::timeout(Duration::from_secs(3), ask).await;
        let closed =
            matches!(asked, Ok(Ok(_))) && self.process.wait_exit(CLOSE_WAIT).await.is_some();
        stop_group(&self.process).await;
        closed
    }

    /// Stops a browser that no longer answers, without asking it.
    pub async fn stop(&self) {
        stop_group(&self.process).await;
    }
}

/// The browser's DevTools WebSocket address, once Chromium listens:
/// `GET /json/version` on its port names it. (Chromium writes
/// `DevToolsActivePort` only for a port it picked itself.) HTTP/1.1, which
/// Chromium asks for; the answer is one small JSON object, read up to
/// [`VERSION_ANSWER_MAX`].
async fn devtools_url(port: u16) -> Option<String> {
    let ask = async {
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
                .await
                .ok()?;
        // Chromium keeps the connection open after answering; it ends with
        // this task, once the body is in.
        let connection = tokio::spawn(connection);
        let request = hyper::Request::get("/json/version")
            .header(hyper::header::HOST, format!("127.0.0.1:{port}"))
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .ok()?;
        let answer = sender.send_request(request).await.ok()?;
        let status = answer.status();
        let body = http_body_util::Limited::new(answer.into_body(), VERSION_ANSWER_MAX);
        let body = http_body_util::BodyExt::collect(body)
            .await
            .ok()?
            .to_bytes();
        connection.abort();
        (status == hyper::StatusCode::OK).then_some(body)
    };
    let body = tokio::time::timeout(Duration::from_secs(2), ask)
        .await
        .ok()??;
    websocket_of(&body, port)
}

/// The most of a `/json/version` answer read: it is a few hundred bytes.
const VERSION_ANSWER_MAX: usize = 64 * 1024;

/// The browser's WebSocket address from a `/json/version` body. Only its
/// path is taken: Chromium builds the host part from the request's `Host`,
/// and the socket to use is the port asked anyway.
fn websocket_of(body: &[u8], port: u16) -> Option<String> {
    let version: serde_json::Value = serde_json::from_slice(body).ok()?;
    let url = version.get("webSocketDebuggerUrl")?.as_str()?;
    let path = &url[url.find("/devtools/browser/")?..];
    let id = path.trim_start_matches("/devtools/browser/");
    let plain = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    plain.then(|| format!("ws://127.0.0.1:{port}{path}"))
}

/// SIGTERM to the browser (Chromium closes on it too), SIGKILL when it
/// lingers, then SIGKILL to its process group: renderers and zygotes that
/// outlived it must not keep the profile or memory.
async fn stop_group(process: &Supervised) {
    process.stop(Duration::from_secs(3)).await;
    if process.pid > 0 {
        // SAFETY: killpg(2) on the group Chromium leads (process_group(0)
        // made its pid the group id); a group with no members fails harmlessly.
        unsafe { libc::killpg(process.pid, libc::SIGKILL) };
    }
}

/// The user-data folder of screen `screen`'s Chromium.
pub fn user_data_dir(home: &Path, screen: u8) -> PathBuf {
    home.join(".cache/computer-use/chromium")
        .join(format!("screen-{screen}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_devtools_address_from_json_version() {
        let good = r#"{"Browser": "Chrome/156", "webSocketDebuggerUrl": "ws://127.0.0.1:9223/devtools/browser/abc-123"}"#;
        assert_eq!(
            websocket_of(good.as_bytes(), 9223).as_deref(),
            Some("ws://127.0.0.1:9223/devtools/browser/abc-123")
        );
        // Only the path is taken; the socket is always the port asked.
        let elsewhere = r#"{"webSocketDebuggerUrl": "ws://10.0.0.9/devtools/browser/x-1"}"#;
        assert_eq!(
            websocket_of(elsewhere.as_bytes(), 9223).as_deref(),
            Some("ws://127.0.0.1:9223/devtools/browser/x-1")
        );
        let odd = r#"{"webSocketDebuggerUrl": "ws://127.0.0.1/devtools/browser/a?b=c"}"#;
        assert_eq!(websocket_of(odd.as_bytes(), 9223), None);
        assert_eq!(websocket_of(b"{}", 9223), None);
        assert_eq!(websocket_of(b"not json", 9223), None);
    }

    #[test]
    fn every_browser_gets_the_flags_that_keep_it_working_in_docker() {
        let home = Path::new("/home/computer");
        let dir = user_data_dir(home, 3);
        let cmd = chromium_command(&ChromiumArgs {
            screen: 3,
            screen_env: ScreenEnv {
                display: 3,
                session_bus: false,
            },
            size: ScreenSize {
                width: 1280,
                height: 800,
            },
            user_data_dir: &dir,
            devtools_port: 9224,
            home,
            env: &[],
        });
        let args: Vec<String> = cmd
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        for flag in [
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--remote-debugging-port=9224",
            "--user-data-dir=/home/computer/.cache/computer-use/chromium/screen-3",
            "--window-size=1280,800",
        ] {
            assert!(args.iter().any(|a| a == flag), "{flag} missing: {args:?}");
        }
        assert_eq!(args.last().map(String::as_str), Some("about:blank"));
    }
}
