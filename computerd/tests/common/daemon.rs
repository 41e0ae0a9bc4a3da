//! A real computerd process for one test.

use reqwest::{Client, StatusCode};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use tempfile::TempDir;

pub const TOKEN: &str = "test-token-0123456789abcdef";

/// Settings a test may change; everything else gets test defaults.
#[derive(Default, Clone)]
pub struct DaemonOptions {
    pub env: Vec<(&'static str, String)>,
}

pub struct Daemon {
    child: Child,
    pub base_url: String,
    /// The viewer's bound address, `127.0.0.1:<port>`.
    pub viewer_addr: String,
    pub home: TempDir,
    /// Fluxbox's settings, apart from the home that file tests list.
    _fluxbox: TempDir,
    pub display_base: u32,
    pub rfb_port_base: u16,
    pub devtools_port_base: u16,
    /// Keeps other test processes off this daemon's displays and ports.
    _range: RangeClaim,
    options: DaemonOptions,
    client: Client,
}

/// An address computerd printed at start.
enum Address {
    Api(String),
    Viewer(String),
}

/// The work tree's viewer page; noVNC comes from `scripts/fetch-novnc.sh`.
pub fn viewer_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../image/viewer")
}

static NEXT_RANGE: AtomicU32 = AtomicU32::new(0);

/// First display of the ranges test daemons use, and how many ranges there are.
const FIRST_DISPLAY: u32 = 400;
const RANGES: u32 = 500;

/// A range of 17 X displays and their VNC ports, held for one daemon.
/// Checking that no X server holds the displays is not enough: a daemon
/// opens its screens later, so two test processes could check the same
/// empty range and both take it. The claim is an `flock` on a file per
/// range, released when the daemon (or its test process) goes.
struct RangeClaim {
    display_base: u32,
    rfb_port_base: u16,
    devtools_port_base: u16,
    _lock: std::fs::File,
}

/// Claims a range no other test process holds, whose displays no X server
/// holds (lock file, socket file, or abstract socket) and whose VNC ports are
/// free on every address.
fn claim_free_range() -> RangeClaim {
    // Each process starts at its own slot so that parallel test binaries
    // rarely even try the same range.
    let start = std::process::id().wrapping_mul(7);
    for _ in 0..RANGES {
        let k = NEXT_RANGE.fetch_add(1, Ordering::SeqCst);
        let display_base = FIRST_DISPLAY + (start.wrapping_add(k) % RANGES) * 17;
        let Some(lock) = lock_range(display_base) else {
            continue;
        };
        let Some(rfb_port_base) = rfb_port_base_for(display_base) else {
            continue;
        };
        let Some(devtools_port_base) = devtools_port_base_for(display_base) else {
            continue;
        };
        let abstract_sockets = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
        let free = (1..=16).all(|i| display_free(display_base + i, &abstract_sockets));
        if free {
            return RangeClaim {
                display_base,
                rfb_port_base,
                devtools_port_base,
                _lock: lock,
            };
        }
    }
    panic!(
        "no free range of 17 X displays between :{FIRST_DISPLAY} and :{}",
        FIRST_DISPLAY + RANGES * 17
    );
}

/// The range's claim file, locked, or `None` when another process holds it.
fn lock_range(display_base: u32) -> Option<std::fs::File> {
    use std::os::fd::AsRawFd;
    let path = format!("/tmp/computerd-test-displays-{display_base}.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open {path}: {e}"));
    // SAFETY: flock on a descriptor this function owns.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    locked.then_some(file)
}

/// True when no X server holds display `n`: no lock file, no socket file,
/// and no abstract socket (an X server of another mount namespace).
fn display_free(n: u32, abstract_sockets: &str) -> bool {
    let socket = format!("/tmp/.X11-unix/X{n}");
    !std::path::Path::new(&format!("/tmp/.X{n}-lock")).exists()
        && !std::path::Path::new(&socket).exists()
        && !abstract_sockets
            .lines()
            .any(|line| line.split_whitespace().last() == Some(&format!("@{socket}")))
}

/// VNC ports for a display range: below the kernel's ephemeral range
/// (32768 and up), so no client socket of the tests can take one, and tied to
/// the display slot, so parallel daemons never share one. Each must be free
/// on loopback, on every IPv4 address and on every IPv6 address.
fn rfb_port_base_for(display_base: u32) -> Option<u16> {
    let base = u16::try_from(10_000 + (display_base - FIRST_DISPLAY)).ok()?;
    (1..=16).all(|i| port_free(base + i)).then_some(base)
}

/// DevTools ports of the range's browsers, chosen like the VNC ports
/// (10000 above them, still below the ephemeral range).
fn devtools_port_base_for(display_base: u32) -> Option<u16> {
    let base = u16::try_from(20_000 + (display_base - FIRST_DISPLAY)).ok()?;
    (1..=16).all(|i| port_free(base + i)).then_some(base)
}

fn port_free(port: u16) -> bool {
    let v6_free = match TcpListener::bind(("::", port)) {
        Ok(_) => true,
        // No IPv6 on this machine: nothing can listen there.
        Err(e) => {
            e.kind() == std::io::ErrorKind::AddrNotAvailable
                || e.raw_os_error() == Some(libc::EAFNOSUPPORT)
        }
    };
    v6_free
        && TcpListener::bind(("127.0.0.1", port)).is_ok()
        && TcpListener::bind(("0.0.0.0", port)).is_ok()
}

/// Starts computerd for `home` on `range`; returns it with the API and
/// viewer addresses it printed.
fn spawn(
    home: &std::path::Path,
    fluxbox: &std::path::Path,
    range: &RangeClaim,
    options: &DaemonOptions,
) -> (Child, String, String) {
    let (display_base, rfb_port_base) = (range.display_base, range.rfb_port_base);
    let devtools_port_base = range.devtools_port_base;
    // `computer-use-launch` (the screens' menu and xdg-open) from the work tree.
    let image_bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../image/bin");
    let path = std::env::join_paths(std::iter::once(image_bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH joins");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_computerd"));
    cmd.env("COMPUTERD_TOKEN", TOKEN)
        .env("COMPUTERD_LISTEN", "127.0.0.1:0")
        .env("COMPUTERD_HOME", home)
        .env("HOME", home)
        .env("COMPUTERD_DISPLAY_BASE", display_base.to_string())
        .env("COMPUTERD_RFB_PORT_BASE", rfb_port_base.to_string())
        .env("COMPUTERD_RFB_INTERFACE", "127.0.0.1")
        .env(
            "COMPUTERD_DEVTOOLS_PORT_BASE",
            devtools_port_base.to_string(),
        )
        .env("COMPUTERD_LAUNCHER_LISTEN", "127.0.0.1:0")
        .env("PATH", path)
        // The computer's own Fluxbox settings; Fluxbox's defaults pop up
        // an `xmessage` that steals the focus (see `fluxbox_config`).
        .env(
            "COMPUTERD_FLUXBOX_DIR",
            super::fluxbox_config::write_to(fluxbox),
        )
        .env("COMPUTER_USE_SCREEN_SIZE", "1280x800")
        .env("COMPUTERD_VIEWER_LISTEN", "127.0.0.1:0")
        .env("COMPUTERD_VIEWER_DIR", viewer_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in &options.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("computerd starts");
    let stdout = child.stdout.take().expect("stdout is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        while let Some(Ok(line)) = lines.next() {
            if let Some(addr) = line.split("listening on ").nth(1) {
                let _ = tx.send(Address::Api(addr.trim().to_string()));
            } else if let Some(addr) = line.strip_prefix("viewer on http://") {
                let _ = tx.send(Address::Viewer(addr.trim().to_string()));
            }
        }
    });
    let (mut api, mut viewer) = (None, None);
    while api.is_none() || viewer.is_none() {
        match rx
            .recv_timeout(Duration::from_secs(20))
            .expect("computerd prints its API and viewer addresses within 20 s")
        {
            Address::Api(a) => api = Some(a),
            Address::Viewer(a) => viewer = Some(a),
        }
    }
    (
        child,
        api.expect("API address"),
        viewer.expect("viewer address"),
    )
}

impl Daemon {
    pub async fn start() -> Daemon {
        Daemon::start_with(DaemonOptions::default()).await
    }

    pub async fn start_with(options: DaemonOptions) -> Daemon {
        super::require_x_programs();
        let home = tempfile::tempdir().expect("temp home");
        let fluxbox = tempfile::tempdir().expect("temp fluxbox settings");
        super::fluxbox_config::write_home_overlay(home.path());
        let range = claim_free_range();
        let (child, api, viewer) = spawn(home.path(), fluxbox.path(), &range, &options);
        Daemon {
            child,
            base_url: format!("http://{api}"),
            viewer_addr: viewer,
            home,
            _fluxbox: fluxbox,
            display_base: range.display_base,
            rfb_port_base: range.rfb_port_base,
            devtools_port_base: range.devtools_port_base,
            _range: range,
            options,
            client: Client::builder()
                .timeout(Duration::from_secs(120))
                .build()
                .expect("http client"),
        }
    }

    /// Stops computerd cleanly and starts it again on the same home and
    /// displays, as a restarted container would.
    pub fn restart(&mut self) {
        self.stop();
        let (child, api, viewer) = spawn(
            self.home.path(),
            self._fluxbox.path(),
            &self._range,
            &self.options,
        );
        self.child = child;
        self.base_url = format!("http://{api}");
        self.viewer_addr = viewer;
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }

    /// `http://127.0.0.1:<viewer port><path>`.
    pub fn viewer_url(&self, path: &str) -> String {
        format!("http://{}{}", self.viewer_addr, path)
    }

    pub fn viewer_port(&self) -> u16 {
        self.viewer_addr
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .expect("viewer address has a port")
    }

    /// The viewer key (its first 8 characters are the VNC password).
    pub async fn viewer_key(&self) -> String {
        let (status, info) = self.call("GET", "/v1/computer", None).await;
        assert!(status.is_success(), "GET /v1/computer -> {status}: {info}");
        info["viewer_key"].as_str().expect("viewer_key").to_string()
    }

    /// Opens the session's screen (its first observe) and returns its number.
    pub async fn open_screen(&self, session: &str) -> u8 {
        let observed = self
            .ok(&format!("/v1/sessions/{session}/observe"), json!({}))
            .await;
        let (_, list) = self.call("GET", "/v1/sessions", None).await;
        let listed = list["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .find(|s| s["session_id"] == session)
            .and_then(|s| s["screen"].as_u64())
            .expect("the observed session has a screen");
        // The observation names the same screen, which the host opens the
        // viewer on without asking for the list.
        assert_eq!(observed["screen"], listed, "{observed}");
        listed as u8
    }

    /// Sends a request with the real token; returns status and JSON body.
    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut req = self
            .client
            .request(method.parse().expect("method"), self.url(path))
            .bearer_auth(TOKEN);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.expect("computerd answers");
        let status = resp.status();
        let text = resp.text().await.expect("body");
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call("POST", path, Some(body)).await
    }

    /// Posts and asserts success.
    pub async fn ok(&self, path: &str, body: Value) -> Value {
        let (status, value) = self.post(path, body.clone()).await;
        assert!(
            status.is_success(),
            "POST {path} {body} -> {status}: {value}"
        );
        value
    }

    pub fn raw(&self) -> &Client {
        &self.client
    }

    pub async fn create_session(&self, title: &str) -> String {
        self.create_session_as(title, "owner-test").await
    }

    pub async fn create_session_as(&self, title: &str, owner: &str) -> String {
        let v = self
            .ok("/v1/sessions", json!({"title": title, "owner": owner}))
            .await;
        v["session_id"].as_str().expect("session_id").to_string()
    }

    pub async fn shell(&self, session: &str, command: &str) -> Value {
        self.ok(
            &format!("/v1/sessions/{session}/shell"),
            json!({"command": command}),
        )
        .await
    }

    /// The screen numbers the session list shows, sorted.
    pub async fn listed_screens(&self) -> Vec<u64> {
        let (_, list) = self.call("GET", "/v1/sessions", None).await;
        let mut numbers: Vec<u64> = list["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .filter_map(|s| s["screen"].as_u64())
            .collect();
        numbers.sort();
        numbers
    }

    /// The screen numbers (display minus base) of every Xvnc running on this
    /// daemon's display range, sorted: open screens and orphans alike.
    pub fn running_xvnc_screens(&self) -> Vec<u64> {
        let mut numbers: Vec<u64> = self
            .running_xvnc()
            .into_iter()
            .map(|(_, number)| number)
            .collect();
        numbers.sort();
        numbers
    }

    /// The process id and screen number of every Xvnc running on this
    /// daemon's display range.
    pub fn running_xvnc(&self) -> Vec<(i32, u64)> {
        super::processes::processes()
            .into_iter()
            .filter(|(_, args)| args.first().is_some_and(|a| a.ends_with("Xvnc")))
            .filter_map(|(pid, args)| {
                let display = args.get(1)?.strip_prefix(':')?.parse::<u32>().ok()?;
                let ours = (self.display_base + 1..=self.display_base + 16).contains(&display);
                ours.then(|| (pid, u64::from(display - self.display_base)))
            })
            .collect()
    }

    /// Sends `method path` with the token and a JSON body over a raw TCP
    /// connection, and hangs up `after` that without reading the answer: a
    /// client that gave up (the user pressed Esc, the host exited).
    pub async fn send_and_hang_up(&self, method: &str, path: &str, body: &str, after: Duration) {
        use tokio::io::AsyncWriteExt;
        let addr = self.base_url.trim_start_matches("http://");
        let mut tcp = tokio::net::TcpStream::connect(addr)
            .await
            .expect("computerd accepts");
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        tcp.write_all(request.as_bytes()).await.expect("request");
        tokio::time::sleep(after).await;
        drop(tcp);
    }

    /// Sends SIGTERM and waits for a clean exit.
    pub fn stop(&mut self) -> Option<std::process::ExitStatus> {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        self.child.wait().ok()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}
