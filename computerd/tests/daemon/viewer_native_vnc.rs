//! Native VNC clients reach a screen directly (host port base + N) and
//! authenticate with the VNC password (the viewer key's first 8 characters): here `vncdo`
//! (vncdotool from PyPI), a real client, against a real computerd.

use crate::common::{require_program, Daemon};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `vncdo` against `port` with `password`, capturing the screen to
/// `png`; kills it after 60 s.
fn vncdo(port: u16, password: &str, png: &std::path::Path) -> Output {
    let mut child = Command::new("vncdo")
        .args([
            "-s",
            &format!("127.0.0.1::{port}"),
            "-p",
            password,
            "capture",
        ])
        .arg(png)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vncdo starts");
    let started = Instant::now();
    while child.try_wait().expect("vncdo status").is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("vncdo output")
}

fn describe(out: &Output) -> String {
    format!(
        "status {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_native_vnc_client_needs_the_key() {
    require_program("vncdo", "python3 -m pip install vncdotool==1.4.2");
    let d = Daemon::start().await;
    // The VNC password is the viewer key's first 8 characters.
    let key = computer_protocol::vnc_password(&d.viewer_key().await).to_string();
    let id = d.create_session("Native VNC").await;
    let screen = d.open_screen(&id).await;
    let port = d.rfb_port_base + u16::from(screen);
    let dir = tempfile::tempdir().unwrap();

    let png = dir.path().join("screen.png");
    let out = tokio::task::spawn_blocking({
        let png = png.clone();
        move || vncdo(port, &key, &png)
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "vncdo with the key failed: {}",
        describe(&out)
    );
    let bytes = std::fs::read(&png).expect("vncdo wrote the capture");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1280, 800));

    let refused = dir.path().join("refused.png");
    let out = tokio::task::spawn_blocking({
        let refused = refused.clone();
        move || vncdo(port, "wrongkey", &refused)
    })
    .await
    .unwrap();
    assert!(
        !out.status.success(),
        "vncdo got in with a wrong key: {}",
        describe(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Authentication failure"),
        "{}",
        describe(&out)
    );
    assert!(!refused.exists());
}
