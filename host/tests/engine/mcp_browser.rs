//! The browser per screen through the real host binary, in the real image:
//! each session's browser on its own screen, `open_path` of pages and
//! files, `xdg-open` of a link from a shell landing in that screen's
//! Chromium, `launch_app`, the uBlock Origin Lite policy, and `end_session`
//! closing the browser.

use crate::support::docker::shared_computer;
use crate::support::mcp::{
    call, connect, is_error, ok, pids, screen_number, shell_ok as shell, start_session as start,
    text, wait_pids_gone, write_files, Client,
};
use serde_json::json;
use std::time::{Duration, Instant};

async fn active_window(client: &Client, sid: &str) -> String {
    let (o, _) = ok(client, "computer_observe", json!({ "session_id": sid })).await;
    o["active_window"].as_str().unwrap_or("").to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_session_gets_its_own_browser_and_loses_it_with_the_session() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let a = start(&client, "browser a").await;
    let b = start(&client, "browser b").await;
    for sid in [&a, &b] {
        let (r, _) = ok(
            &client,
            "launch_app",
            json!({"session_id": sid, "app": "browser"}),
        )
        .await;
        assert_eq!(r["ready"], true, "{r}");
        assert!(
            r["active_window"]
                .as_str()
                .unwrap_or("")
                .contains("Chromium"),
            "{r}"
        );
    }
    let (na, nb) = (
        screen_number(&client, &a).await,
        screen_number(&client, &b).await,
    );
    assert_ne!(na, nb);
    // Each screen's DevTools answer on 9221 + N inside the computer.
    for n in [na, nb] {
        let r = shell(
            &client,
            &a,
            &format!("curl -fsS http://127.0.0.1:{}/json/version", 9221 + n),
        )
        .await;
        assert_eq!(r["exit_code"], 0, "screen {n}: {r}");
    }

    // A second launch raises the same browser.
    let (again, _) = ok(
        &client,
        "launch_app",
        json!({"session_id": a, "app": "browser"}),
    )
    .await;
    assert!(
        again["summary"]
            .as_str()
            .unwrap()
            .contains("already running"),
        "{again}"
    );

    // By pid: the computer is shared, and another test's session may take
    // screen a's number, and its browser port, as soon as a ends.
    let browser = pids(
        &client,
        &b,
        &format!("[-]-remote-debugging-port={}", 9221 + na),
    )
    .await;
    assert!(!browser.is_empty(), "session a's Chromium is not running");
    ok(&client, "end_session", json!({ "session_id": a })).await;
    wait_pids_gone(
        &client,
        &b,
        &browser,
        Duration::from_secs(15),
        "session a's Chromium",
    )
    .await;
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn pages_files_links_and_apps_open_on_the_sessions_screen() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start(&client, "open things").await;
    write_files(
        &client,
        &sid,
        &[
            (
                "site/index.html",
                "<!doctype html><title>local index</title><a href=other.html>other</a>",
            ),
            (
                "site/other.html",
                "<!doctype html><title>the other page</title>",
            ),
        ],
    )
    .await;

    // A file opens in the browser; the tool says it loaded.
    let (file, result) = ok(
        &client,
        "open_path",
        json!({"session_id": sid, "target": "site/index.html"}),
    )
    .await;
    assert_eq!(file["ready"], true, "{file}");
    assert!(text(&result).contains("loaded"), "{}", text(&result));
    assert!(file["active_window"]
        .as_str()
        .unwrap()
        .contains("local index"));

    // A URL served inside the computer.
    shell(
        &client,
        &sid,
        "cd ~/site && setsid nohup python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & for i in $(seq 50); do curl -fs http://127.0.0.1:8765/ >/dev/null && break; sleep 0.1; done",
    )
    .await;
    let (url, _) = ok(
        &client,
        "open_path",
        json!({"session_id": sid, "target": "http://127.0.0.1:8765/"}),
    )
    .await;
    assert!(
        url["active_window"]
            .as_str()
            .unwrap()
            .contains("local index"),
        "{url}"
    );

    // `xdg-open` of a link in a shell lands in this screen's browser.
    let r = shell(&client, &sid, "xdg-open http://127.0.0.1:8765/other.html").await;
    assert_eq!(r["exit_code"], 0, "{r}");
    let deadline = Instant::now() + Duration::from_secs(15);
    while !active_window(&client, &sid)
        .await
        .contains("the other page")
    {
        assert!(Instant::now() < deadline, "xdg-open's page never showed");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let n = screen_number(&client, &sid).await;
    // Still one browser on this screen (the computer is shared with other
    // tests' screens): the link went to it, not to a second Chromium.
    let count = shell(
        &client,
        &sid,
        &format!(
            "ps -eo args= | grep -- '--remote-debugging-port={}' | grep -v -e '--type=' -e grep | wc -l",
            9221 + u32::from(n)
        ),
    )
    .await;
    assert_eq!(
        count["stdout"].as_str().unwrap().trim(),
        "1",
        "screen {n}: {count}"
    );

    // A missing file names what the folder holds; an unknown app lists apps.
    let r = call(
        &client,
        "open_path",
        json!({"session_id": sid, "target": "site/missing.pdf"}),
    )
    .await;
    assert!(
        is_error(&r) && text(&r).contains("other.html"),
        "{}",
        text(&r)
    );
    let r = call(
        &client,
        "launch_app",
        json!({"session_id": sid, "app": "no-such-app"}),
    )
    .await;
    assert!(
        is_error(&r) && text(&r).contains("terminal"),
        "{}",
        text(&r)
    );

    // A terminal.
    let (t, _) = ok(
        &client,
        "launch_app",
        json!({"session_id": sid, "app": "terminal"}),
    )
    .await;
    assert_eq!(t["ready"], true, "{t}");
    // The active window is the terminal: `xterm` until its shell's first
    // prompt titles it `user@host: folder`.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let title = active_window(&client, &sid).await;
        if title.contains("computer@") {
            break;
        }
        assert!(
            title == "xterm" && Instant::now() < deadline,
            "active window `{title}`, not the terminal; launch_app said {t}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // uBlock Origin Lite is offered by policy, so the user can disable it.
    let policy = shell(
        &client,
        &sid,
        "jq -r '.ExtensionSettings.ddkjiahejlhfcafbddmgiahcphecmpfh.installation_mode' /etc/chromium/policies/managed/computer-use.json",
    )
    .await;
    assert_eq!(
        policy["stdout"].as_str().unwrap().trim(),
        "normal_installed"
    );
    client.cancel().await.ok();
}

/// Reads what `chrome://policy` shows on the Chromium with DevTools on
/// `port`, from inside the computer: its rows sit in shadow roots, so the
/// script walks them and returns their text.
const POLICY_PAGE_TEXT: &str = r#"
const port = process.argv[2];
const target = await (await fetch(`http://127.0.0.1:${port}/json/new`, { method: "PUT" })).json();
const ws = new WebSocket(target.webSocketDebuggerUrl);
await new Promise((ok) => ws.addEventListener("open", ok));
let id = 0;
const send = (method, params) => new Promise((ok) => {
  const me = ++id;
  ws.addEventListener("message", function on(event) {
    const answer = JSON.parse(event.data);
    if (answer.id === me) { ws.removeEventListener("message", on); ok(answer); }
  });
  ws.send(JSON.stringify({ id: me, method, params }));
});
await send("Page.navigate", { url: "chrome://policy" });
const walk = `(function walk(node) {
  let text = "";
  if (node.shadowRoot) text += walk(node.shadowRoot);
  for (const child of node.childNodes) {
    if (child.nodeType === 3) text += child.textContent.trim() + " ";
    else if (child.nodeType === 1 && !["STYLE", "SCRIPT", "TEMPLATE"].includes(child.tagName)) text += walk(child);
  }
  if (node.nodeType === 1 && node.tagName === "POLICY-ROW") text += "\\n";
  return text;
})(document.body)`;
let text = "";
for (let i = 0; i < 100 && !text.includes("ExtensionSettings"); i++) {
  await new Promise((ok) => setTimeout(ok, 100));
  const answer = await send("Runtime.evaluate", { expression: walk, returnByValue: true });
  if (answer.result.exceptionDetails) console.error(JSON.stringify(answer.result.exceptionDetails));
  text = answer.result.result.value ?? "";
}
if (!text.includes("ExtensionSettings")) {
  const where = await send("Runtime.evaluate", { expression: "location.href + ' ' + document.documentElement.outerHTML.slice(0, 800)", returnByValue: true });
  console.error(JSON.stringify(where));
}
console.log(text.split("\n").map((l) => l.replace(/\s+/g, " ").trim()).filter(Boolean).join("\n"));
ws.close();
"#;

#[tokio::test(flavor = "multi_thread")]
async fn chromium_applies_the_ublock_policy_and_asks_the_web_store_for_it() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start(&client, "ublock").await;
    // This machine cannot reach the Chrome Web Store. To see Chromium ask
    // for the extension, its update host points at a listener in the
    // computer that keeps the first bytes each connection sends: the TLS
    // greeting names the host it wants.
    let listening = shell(
        &client,
        &sid,
        r#"echo '127.0.0.1 clients2.google.com' | sudo tee -a /etc/hosts >/dev/null
sudo setsid nohup python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 443)); s.listen(8)
while True:
    c, _ = s.accept(); c.settimeout(5)
    try: data = c.recv(4096)
    except OSError: data = b""
    open("/tmp/update-requests", "ab").write(data); c.close()
' >/dev/null 2>&1 &
for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/443) 2>/dev/null && exit 0; sleep 0.1; done; exit 1"#,
    )
    .await;
    assert_eq!(listening["exit_code"], 0, "{listening}");

    ok(
        &client,
        "launch_app",
        json!({"session_id": sid, "app": "browser"}),
    )
    .await;
    let n = screen_number(&client, &sid).await;
    write_files(&client, &sid, &[("policy.mjs", POLICY_PAGE_TEXT)]).await;
    let read = shell(&client, &sid, &format!("node policy.mjs {}", 9221 + n)).await;
    assert_eq!(read["exit_code"], 0, "{read}");
    let page = read["stdout"].as_str().unwrap();
    // The row: the policy's value from the image's file, from the machine's
    // platform policies, applied with the status OK.
    let row = page
        .split_once("\nExtensionSettings ")
        .map(|(_, rest)| rest.lines().next().unwrap_or(""))
        .unwrap_or_else(|| panic!("chrome://policy has no ExtensionSettings row:\n{page}"));
    assert!(
        row.starts_with(r#"{"ddkjiahejlhfcafbddmgiahcphecmpfh":{"installation_mode":"normal_installed","update_url":"https://clients2.google.com/service/update2/crx"}}"#)
            && row.contains("} Platform Machine Mandatory OK"),
        "{row}"
    );

    // Chromium asked the update host for the extension.
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        // The listener runs as root, so its file is root's.
        let asked = shell(
            &client,
            &sid,
            "sudo grep -ac clients2.google.com /tmp/update-requests 2>/dev/null || true",
        )
        .await;
        let connections: u32 = asked["stdout"]
            .as_str()
            .unwrap()
            .trim()
            .parse()
            .unwrap_or(0);
        if connections > 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Chromium never asked clients2.google.com for uBlock Origin Lite"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    client.cancel().await.ok();
}
