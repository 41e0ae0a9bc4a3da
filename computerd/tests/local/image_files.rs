//! The files under `image/` that computerd relies on, checked without
//! building the image: the Chromium policy, and `computer-use-launch` run
//! with the real `sh`, `awk`, `curl` and `jq` against a one-request HTTP
//! listener standing in for computerd's launcher.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

/// uBlock Origin Lite in the Chrome Web Store.
const UBO_LITE: &str = "ddkjiahejlhfcafbddmgiahcphecmpfh";

const INSTALL: &str = "apt-get install curl jq mawk";

fn image_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../image")
        .join(path)
}

#[test]
fn the_policy_installs_ublock_origin_lite_so_the_user_can_disable_it() {
    let path = image_file("chromium-policies/computer-use.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let policy: Value = serde_json::from_str(&text)
        .unwrap_or_else(|err| panic!("`{}` is not JSON: {err}", path.display()));

    // normal_installed: installs itself, and the user can disable it
    // (force_installed could not be disabled).
    assert_eq!(
        policy["ExtensionSettings"][UBO_LITE],
        json!({
            "installation_mode": "normal_installed",
            "update_url": "https://clients2.google.com/service/update2/crx",
        })
    );
    // No warning bar about --no-sandbox on every page.
    assert_eq!(
        policy["CommandLineFlagSecurityWarningsEnabled"],
        json!(false)
    );
}

/// One HTTP request as the listener saw it.
#[derive(Debug)]
struct Request {
    /// `POST /launch HTTP/1.1`.
    request_line: String,
    /// Header names lowercased.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// How long the listener waits for the request once the launcher has
/// exited (it has sent everything by then) and for each read.
const REQUEST_WAIT: Duration = Duration::from_secs(10);

/// Listens on 127.0.0.1:0, takes one request and answers `status` with the
/// JSON `answer`. Returns the launcher URL and where the request arrives.
fn one_request_listener(status: u16, answer: Value) -> (String, Receiver<Request>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(REQUEST_WAIT)).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut request_line = String::new();
        reader.read_line(&mut request_line).unwrap();
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').unwrap();
            headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
        }
        let len: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();

        let answer = answer.to_string();
        let mut stream = stream;
        write!(
            stream,
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{answer}",
            answer.len()
        )
        .unwrap();
        let _ = sender.send(Request {
            request_line: request_line.trim_end().to_string(),
            headers,
            body,
        });
    });
    (url, receiver)
}

/// The request the listener took; fails when none came.
fn received(request: Receiver<Request>) -> Request {
    request
        .recv_timeout(REQUEST_WAIT)
        .expect("the launcher sent no request")
}

/// Runs the launcher with `args` and only the environment given (plus
/// `PATH`), so nothing from the test's own environment leaks in.
fn launch(env: &[(&str, &str)], args: &[&str]) -> Output {
    for program in ["curl", "jq", "awk"] {
        test_support::require_program(program, INSTALL);
    }
    let script = image_file("bin/computer-use-launch");
    let mut command = Command::new("sh");
    command
        .arg(&script)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap());
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    eprintln!(
        "sh {} {args:?}\nstatus: {}\nstdout: {}\nstderr: {}",
        script.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

#[test]
fn the_launcher_posts_the_display_app_and_an_escaped_uri_with_the_token() {
    let (url, request) = one_request_listener(200, json!({"summary": "opened a tab"}));
    let uri = "file:///tmp/a \"quoted\" name\\with\tcontrol\u{1}\nand é.html";
    let output = launch(
        &[
            ("DISPLAY", ":3"),
            ("COMPUTER_USE_LAUNCHER_URL", &url),
            ("COMPUTER_USE_LAUNCHER_TOKEN", "secret-token"),
        ],
        &["browser", uri],
    );
    let request = received(request);
    eprintln!("{request:?}");

    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stdout), "opened a tab\n");
    assert_eq!(request.request_line, "POST /launch HTTP/1.1");
    assert_eq!(request.header("authorization"), Some("Bearer secret-token"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body, json!({"display": ":3", "app": "browser", "uri": uri}));
}

#[test]
fn the_launcher_sends_no_uri_when_none_is_given() {
    let (url, request) = one_request_listener(200, json!({"summary": "raised xterm"}));
    let output = launch(
        &[
            ("DISPLAY", ":12"),
            // A trailing slash does not double the one before `launch`.
            ("COMPUTER_USE_LAUNCHER_URL", &format!("{url}/")),
            ("COMPUTER_USE_LAUNCHER_TOKEN", "t"),
        ],
        &["terminal"],
    );
    let request = received(request);

    assert!(output.status.success());
    assert_eq!(request.request_line, "POST /launch HTTP/1.1");
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body, json!({"display": ":12", "app": "terminal"}));
}

#[test]
fn the_launcher_prints_computerds_error_message_and_fails() {
    let (url, request) = one_request_listener(
        404,
        json!({"code": "screen_not_found", "message": "no screen `:3` in this computer"}),
    );
    let output = launch(
        &[
            ("DISPLAY", ":3"),
            ("COMPUTER_USE_LAUNCHER_URL", &url),
            ("COMPUTER_USE_LAUNCHER_TOKEN", "t"),
        ],
        &["browser"],
    );
    received(request);

    assert_eq!(output.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "computer-use-launch: no screen `:3` in this computer\n"
    );
}

#[test]
fn the_launcher_without_computerds_environment_says_where_it_works() {
    let output = launch(
        &[("DISPLAY", ":3"), ("COMPUTER_USE_LAUNCHER_TOKEN", "t")],
        &["browser", "https://example.com"],
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "computer-use-launch: `COMPUTER_USE_LAUNCHER_URL` is not set; the launcher \
         needs computerd's environment, which the shell tool and the screen's menu have\n"
    );
}

#[test]
fn the_launcher_without_display_and_with_bad_usage_says_so() {
    let output = launch(&[], &["browser"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "computer-use-launch: `DISPLAY` is not set; run it on a screen\n"
    );

    let output = launch(&[("DISPLAY", ":3")], &["terminal", "extra"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "usage: computer-use-launch browser [URI] | terminal | clipboard [FILE] | run PROGRAM [ARG...]\n"
    );
    for bad in [&["run"][..], &["clipboard", "a", "b"]] {
        let output = launch(&[("DISPLAY", ":3")], bad);
        assert_eq!(output.status.code(), Some(2), "{bad:?}");
    }
}
