//! A real computerd keeps its secrets and its sockets: children never see
//! the API token, and a client that never finishes a request head is cut
//! off.

use crate::common::daemon::TOKEN;
use crate::common::Daemon;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Pids whose command line starts with `program`, then `first_arg`.
fn pids_running(program: &str, first_arg: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                return false;
            };
            let mut args = cmdline.split(|b| *b == 0);
            let name = args.next().unwrap_or_default();
            let name = name.rsplit(|b| *b == b'/').next().unwrap_or_default();
            name == program.as_bytes() && args.next() == Some(first_arg.as_bytes())
        })
        .collect()
}

fn environ_of(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/environ"))
        .unwrap_or_else(|e| panic!("cannot read /proc/{pid}/environ: {e}"));
    String::from_utf8_lossy(&raw).replace('\0', "\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn no_child_inherits_the_token() {
    let daemon = Daemon::start().await;
    let session = daemon.create_session("secrets").await;
    let out = daemon
        .shell(
            &session,
            "printenv COMPUTERD_TOKEN; printenv COMPUTERD_LISTEN; true",
        )
        .await;
    assert_eq!(out["stdout"], "", "{out}");
    let out = daemon.shell(&session, "env").await;
    assert!(
        !out["stdout"].as_str().unwrap().contains(TOKEN),
        "the token is in a shell command's environment: {out}"
    );

    let screen = daemon.open_screen(&session).await;
    let display = format!(":{}", daemon.display_base + u32::from(screen));
    let xvnc = pids_running("Xvnc", &display);
    assert_eq!(xvnc.len(), 1, "one Xvnc for {display}: {xvnc:?}");
    let environ = environ_of(xvnc[0]);
    assert!(
        !environ.contains(TOKEN) && !environ.contains("COMPUTERD_TOKEN"),
        "Xvnc's environment holds the token:\n{environ}"
    );
}

/// Connects to `addr`, sends half a request line, and returns how long the
/// server took to close the socket (or fails after `limit`).
fn time_until_closed(addr: &str, limit: Duration) -> Duration {
    let mut socket = TcpStream::connect(addr).unwrap();
    socket.write_all(b"GET /health HT").unwrap();
    let started = Instant::now();
    socket.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 256];
    loop {
        match socket.read(&mut buf) {
            // Closed (hyper may answer 408 first; either ends the socket).
            Ok(0) => return started.elapsed(),
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return started.elapsed(),
            Err(e) => panic!(
                "{addr} kept a half request open for {:?}: {e}",
                started.elapsed()
            ),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn half_a_request_line_is_cut_off_on_both_listeners() {
    let daemon = Daemon::start().await;
    let limit = computerd::http_server::HEADER_READ_TIMEOUT + Duration::from_secs(5);
    let api = daemon.base_url.trim_start_matches("http://").to_string();
    let viewer = daemon.viewer_addr.clone();
    let (api_took, viewer_took) = tokio::join!(
        tokio::task::spawn_blocking(move || time_until_closed(&api, limit)),
        tokio::task::spawn_blocking(move || time_until_closed(&viewer, limit)),
    );
    eprintln!(
        "timing: half request closed after {:?} (API), {:?} (viewer)",
        api_took.as_ref().unwrap(),
        viewer_took.as_ref().unwrap()
    );
    // Normal requests still work on a fresh connection.
    let (status, _) = daemon.call("GET", "/v1/sessions", None).await;
    assert!(status.is_success());
}
