//! Snapshots through the real host binary and a real engine: save a
//! computer, wreck it as root, restore it, reset it, and every bad input
//! on the way refused with nothing changed. Over stdio, and over HTTP in
//! scripts/test-http.sh's pass, and on a remote engine over TLS and ssh in
//! scripts/test-remote.sh's.

use crate::support::docker::{inspect, TestComputer};
use crate::support::mcp::{
    call, connect, is_error, ok, refused, shell_ok, start_session, text, HttpHost,
};
use rmcp::model::ContentBlock;
use serde_json::{json, Value};

/// The shell's stdout, trimmed.
async fn out(client: &crate::support::mcp::Client, session: &str, command: &str) -> String {
    let r = shell_ok(client, session, command).await;
    assert_eq!(r["exit_code"], json!(0), "{command}: {r}");
    r["stdout"].as_str().unwrap_or_default().trim().to_string()
}

/// The local site of the login: on the computer's own loopback.
const SITE: &str = "http://127.0.0.1:8765";

/// Serves, from inside the computer, a page that signs in (sets a cookie)
/// and a page whose title says who is signed in.
async fn serve_login_page(client: &crate::support::mcp::Client, session: &str) {
    out(
        client,
        session,
        "mkdir -p /tmp/site && cd /tmp/site \
         && echo '<!doctype html><title>signing in</title><script>document.cookie=\"sid=alice; path=/; max-age=3600\"; document.title=\"signed in\";</script>' > login.html \
         && echo '<!doctype html><title>who</title><script>document.title=document.cookie.includes(\"sid=alice\")?\"signed in as alice\":\"signed out\";</script>' > index.html \
         && (setsid python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 &) \
         && for i in $(seq 50); do python3 -c 'import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:8765/\")' 2>/dev/null && break; sleep 0.1; done; echo serving",
    )
    .await;
}

/// Runs `command` until it succeeds, for at most 15 s.
async fn wait_for(client: &crate::support::mcp::Client, session: &str, what: &str, command: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let r = shell_ok(client, session, command).await;
        if r["exit_code"] == json!(0) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "waited 15 s for {what}: {r}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

fn names(listed: &Value) -> Vec<String> {
    listed["snapshots"]
        .as_array()
        .expect("snapshots")
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrecked_computer_comes_back_from_its_snapshot() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[("COMPUTER_USE_SNAPSHOTS_MAX", "2")]).await;
    let me = start_session(&client, "snapshots").await;
    // Files, a link out of home and a fifo in home; a program outside home,
    // put there as root.
    out(
        &client,
        &me,
        "mkdir -p ~/work && echo kept > ~/work/a.txt && ln -s /etc/shadow ~/out-link \
         && mkfifo ~/pipe && echo tool | sudo tee /usr/local/bin/added-tool >/dev/null",
    )
    .await;

    // A package installed with dpkg (built here: the test reaches no
    // mirror), and a login: a local page sets a cookie in the session's
    // Chromium, which computerd keeps in the home's cookie jar.
    out(
        &client,
        &me,
        "mkdir -p /tmp/pkg/DEBIAN /tmp/pkg/usr/share/cu-snapshot-test \
         && printf 'Package: cu-snapshot-test\\nVersion: 1.0\\nArchitecture: all\\nMaintainer: test <t@example.com>\\nDescription: snapshot test\\n' > /tmp/pkg/DEBIAN/control \
         && echo packaged > /tmp/pkg/usr/share/cu-snapshot-test/data \
         && chmod -R u=rwX,go=rX /tmp/pkg && dpkg-deb --build /tmp/pkg /tmp/cu-snapshot-test.deb >/dev/null \
         && sudo dpkg -i /tmp/cu-snapshot-test.deb >/dev/null && echo installed",
    )
    .await;
    // A device node planted in the home from outside (the computer itself
    // may not make one): copied as a node, never opened.
    crate::support::docker::docker(&[
        "run",
        "--rm",
        "--user",
        "0",
        "--network",
        "none",
        "--entrypoint",
        "mknod",
        "-v",
        &format!("{}:/h", computer.volume()),
        &crate::support::docker::image(),
        "/h/planted-device",
        "c",
        "1",
        "3",
    ]);
    serve_login_page(&client, &me).await;
    ok(
        &client,
        "open_path",
        json!({"session_id": me, "target": format!("{SITE}/login.html")}),
    )
    .await;
    wait_for(
        &client,
        &me,
        "the jar to hold the login",
        "grep -c alice ~/.local/share/computer-use/cookies.json",
    )
    .await;

    let (saved, _) = ok(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "before-wreck", "note": "files and a tool"}),
    )
    .await;
    assert_eq!(saved["name"], json!("before-wreck"));
    assert!(saved["size_bytes"].as_u64().unwrap() > 0, "{saved}");
    let frozen = saved["frozen_ms"].as_u64().unwrap();
    assert!(frozen <= saved["took_ms"].as_u64().unwrap(), "{saved}");

    // Bad input is refused, naming the field, and changes nothing.
    let bad_name = refused(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "Before Wreck"}),
    )
    .await;
    assert!(
        bad_name.contains("`name`") && bad_name.contains("1 to 64"),
        "{bad_name}"
    );
    let long_note = refused(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "x", "note": "n".repeat(501)}),
    )
    .await;
    assert!(
        long_note.contains("`note` has 501 characters"),
        "{long_note}"
    );
    let taken = refused(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "before-wreck"}),
    )
    .await;
    assert!(
        taken.contains("already has a snapshot named `before-wreck`"),
        "{taken}"
    );
    let (listed, _) = ok(&client, "list_snapshots", json!({"session_id": me})).await;
    assert_eq!(names(&listed), ["before-wreck"]);
    let only = &listed["snapshots"][0];
    assert_eq!(only["note"], json!("files and a tool"));
    assert!(only["created_at"].as_str().unwrap().contains('T'), "{only}");
    assert!(only["image_version"].as_str().is_some(), "{only}");

    // Another agent's session is live on the same computer.
    let (bystander, _) = connect(&computer, &[]).await;
    let them = start_session(&bystander, "bystander").await;

    // Wrecked as root: home emptied, a program of the image and the
    // package removed, and computerd's children killed (Xvnc, the
    // browsers; the shell that does it too, so it waits for nothing).
    out(
        &client,
        &me,
        "rm -rf ~/work ~/pipe ~/out-link ~/planted-device ~/.local/share/computer-use/cookies.json \
         && sudo rm -f /usr/bin/xterm /usr/local/bin/added-tool && sudo dpkg -r cu-snapshot-test >/dev/null \
         && echo wrecked",
    )
    .await;
    let _ = call(
        &client,
        "shell",
        json!({"session_id": me, "command": "sudo pkill -9 -P $(pgrep -o -x computerd)", "timeout": 10}),
    )
    .await;

    let unknown = refused(
        &client,
        "restore_snapshot",
        json!({"session_id": me, "name": "nope"}),
    )
    .await;
    assert!(unknown.contains("it has: before-wreck"), "{unknown}");
    let busy = refused(
        &client,
        "restore_snapshot",
        json!({"session_id": me, "name": "before-wreck"}),
    )
    .await;
    assert!(
        busy.contains(&them) && busy.contains("bystander") && busy.contains("end_other_sessions"),
        "{busy}"
    );
    assert_eq!(out(&client, &me, "echo still here").await, "still here");

    // A recording in progress is never lost to a restore.
    ok(
        &client,
        "start_recording",
        json!({"session_id": me, "task": "snapshot test"}),
    )
    .await;
    let recording = refused(
        &client,
        "restore_snapshot",
        json!({"session_id": me, "name": "before-wreck", "end_other_sessions": true}),
    )
    .await;
    assert!(
        recording.contains("recording in progress") && recording.contains("stop_recording"),
        "{recording}"
    );
    let evidence = tempfile::tempdir().unwrap();
    ok(
        &client,
        "stop_recording",
        json!({"session_id": me, "host_path": evidence.path().join("package")}),
    )
    .await;

    let (restored, result) = ok(
        &client,
        "restore_snapshot",
        json!({"session_id": me, "name": "before-wreck", "end_other_sessions": true}),
    )
    .await;
    assert_eq!(restored["session_id"], json!(me), "{restored}");
    assert_eq!(restored["ended_sessions"][0]["session_id"], json!(them));
    assert!(
        result
            .content
            .iter()
            .any(|c| matches!(c, ContentBlock::Image(_))),
        "a frame of the fresh screen comes back: {}",
        text(&result)
    );
    // Files, the link (as a link), the fifo and the program are back.
    assert_eq!(
        out(
            &client,
            &me,
            "cat ~/work/a.txt; readlink ~/out-link; test -p ~/pipe && echo fifo; \
             test -c ~/planted-device && echo device; \
             test -x /usr/bin/xterm && echo xterm; sudo cat /usr/local/bin/added-tool; \
             dpkg-query -W -f='${Status}\\n' cu-snapshot-test; cat /usr/share/cu-snapshot-test/data"
        )
        .await,
        "kept\n/etc/shadow\nfifo\ndevice\nxterm\ntool\ninstall ok installed\npackaged"
    );
    // Still signed in: the page sees the cookie the snapshot kept.
    serve_login_page(&client, &me).await;
    ok(
        &client,
        "open_path",
        json!({"session_id": me, "target": format!("{SITE}/")}),
    )
    .await;
    let (seen, _) = ok(&client, "computer_observe", json!({"session_id": me})).await;
    assert!(
        seen["active_window"]
            .as_str()
            .unwrap_or("")
            .contains("signed in as alice"),
        "{}",
        seen["active_window"]
    );
    let told = call(
        &bystander,
        "shell",
        json!({"session_id": them, "command": "true"}),
    )
    .await;
    assert!(
        is_error(&told) && text(&told).contains("restored to snapshot before-wreck"),
        "{}",
        text(&told)
    );

    // A reset: the image's files and an empty home; the snapshot stays.
    let (reset, _) = ok(&client, "reset_computer", json!({"session_id": me})).await;
    assert_eq!(reset["session_id"], json!(me));
    assert_eq!(
        out(
            &client,
            &me,
            "test -e ~/work || echo no-work; test -x /usr/bin/xterm && echo xterm; \
             test -e /usr/local/bin/added-tool || echo no-tool"
        )
        .await,
        "no-work\nxterm\nno-tool"
    );

    // At most COMPUTER_USE_SNAPSHOTS_MAX (2 here).
    ok(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "fresh"}),
    )
    .await;
    let full = refused(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "third"}),
    )
    .await;
    assert!(
        full.contains("has 2 snapshots") && full.contains("COMPUTER_USE_SNAPSHOTS_MAX"),
        "{full}"
    );

    // A snapshot whose home copy went missing restores nothing (Docker
    // would mount an empty volume in its place) and changes nothing.
    out(&client, &me, "echo after-reset > ~/now.txt").await;
    let volume = crate::support::docker::docker(&[
        "volume",
        "ls",
        "-q",
        "--filter",
        &format!("label=computer-use.snapshot.of={}", computer.name),
        "--filter",
        "label=computer-use.snapshot.name=fresh",
    ]);
    crate::support::docker::docker(&["volume", "rm", volume.trim()]);
    let lost = refused(
        &client,
        "restore_snapshot",
        json!({"session_id": me, "name": "fresh"}),
    )
    .await;
    assert!(
        lost.contains("is gone from the engine") && lost.contains("Nothing was changed"),
        "{lost}"
    );
    assert_eq!(out(&client, &me, "cat ~/now.txt").await, "after-reset");

    let gone = refused(
        &client,
        "delete_snapshot",
        json!({"session_id": me, "name": "third"}),
    )
    .await;
    assert!(gone.contains("it has: before-wreck, fresh"), "{gone}");
    for name in ["before-wreck", "fresh"] {
        ok(
            &client,
            "delete_snapshot",
            json!({"session_id": me, "name": name}),
        )
        .await;
    }
    let (listed, _) = ok(&client, "list_snapshots", json!({"session_id": me})).await;
    assert!(names(&listed).is_empty(), "{listed}");
}

/// The API token in a computer's container configuration.
fn token_of(name: &str) -> String {
    inspect(name)["Config"]["Env"]
        .as_array()
        .expect("env")
        .iter()
        .filter_map(Value::as_str)
        .find_map(|e| e.strip_prefix("COMPUTERD_TOKEN="))
        .expect("a token")
        .to_string()
}

/// The viewer key in a `start_computer` result's link.
fn viewer_key(started: &Value) -> String {
    let url = started["viewer_url"].as_str().expect("viewer_url");
    url.split_once("#key=").expect("a key").1.to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_template_forks_a_computer_with_keys_of_its_own() {
    let original = TestComputer::new();
    let (client, _) = connect(&original, &[]).await;
    let (started, _) = ok(&client, "start_computer", json!({"title": "template"})).await;
    let sid = started["session_id"].as_str().unwrap().to_string();
    out(
        &client,
        &sid,
        "echo prepared > ~/setup.txt && echo tool | sudo tee /usr/local/bin/baked >/dev/null",
    )
    .await;
    // Root in the template's computer hides its keys behind a link: a fork
    // must still get keys of its own.
    out(
        &client,
        &sid,
        "mv ~/.local/share/computer-use ~/.state-elsewhere \
         && ln -s /home/computer/.state-elsewhere ~/.local/share/computer-use && echo linked",
    )
    .await;
    // A name of this test's own, so that a bare name finds one computer.
    let name = format!("tpl-{}", original.name);
    ok(
        &client,
        "save_snapshot",
        json!({"session_id": sid, "name": name}),
    )
    .await;

    // A bad template fails start_computer, naming the setting, and
    // creates nothing.
    let stray = TestComputer::new();
    let (bad, _) = connect(&stray, &[("COMPUTER_USE_TEMPLATE", "no-such-template")]).await;
    let e = refused(&bad, "start_computer", json!({"title": "bad"})).await;
    assert!(
        e.contains("COMPUTER_USE_TEMPLATE") && e.contains("no-such-template"),
        "{e}"
    );
    assert!(!crate::support::docker::exists(&stray.name));

    for template in [name.clone(), format!("{}:{name}", original.name)] {
        let fork = TestComputer::new();
        let (forked, _) = connect(&fork, &[("COMPUTER_USE_TEMPLATE", &template)]).await;
        let (f, _) = ok(&forked, "start_computer", json!({"title": "fork"})).await;
        let fsid = f["session_id"].as_str().unwrap().to_string();
        assert_eq!(
            out(
                &forked,
                &fsid,
                "cat ~/setup.txt; sudo cat /usr/local/bin/baked"
            )
            .await,
            "prepared\ntool",
            "{template}"
        );
        assert_ne!(token_of(&fork.name), token_of(&original.name));
        assert_ne!(viewer_key(&f), viewer_key(&started));
        // The fork is a computer of its own: its changes stay with it.
        out(&forked, &fsid, "echo fork > ~/setup.txt").await;
        assert_eq!(out(&client, &sid, "cat ~/setup.txt").await, "prepared");
    }
}

/// Two tenants of one HTTP server: each sees and restores only its own
/// computer's snapshots.
#[tokio::test(flavor = "multi_thread")]
async fn a_tenant_sees_and_restores_only_its_own_snapshots() {
    const ALICE: &str = "alice-token-0123456789abcdef0123456789";
    const BOB: &str = "bob-token-0123456789abcdef0123456789abcd";
    let computer = TestComputer::with_port_blocks(3);
    let (_alice_computer, _bob_computer) = (computer.tenant("alice"), computer.tenant("bob"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tenants");
    std::fs::write(&file, format!("alice {ALICE}\nbob {BOB}\n")).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let host = HttpHost::start(
        &computer,
        &[("COMPUTER_USE_HTTP_TENANTS", file.to_str().unwrap())],
    )
    .await;
    let alice = host.client_as(ALICE).await;
    let bob = host.client_as(BOB).await;
    let a = start_session(&alice, "alice").await;
    let b = start_session(&bob, "bob").await;
    out(&alice, &a, "echo alice > ~/mine.txt").await;
    ok(
        &alice,
        "save_snapshot",
        json!({"session_id": a, "name": "alices"}),
    )
    .await;

    let (listed, _) = ok(&bob, "list_snapshots", json!({"session_id": b})).await;
    assert!(names(&listed).is_empty(), "{listed}");
    let e = refused(
        &bob,
        "restore_snapshot",
        json!({"session_id": b, "name": "alices"}),
    )
    .await;
    assert!(
        e.contains("no snapshot named `alices`") && e.contains("it has none"),
        "{e}"
    );
    let e = refused(
        &bob,
        "delete_snapshot",
        json!({"session_id": b, "name": "alices"}),
    )
    .await;
    assert!(e.contains("no snapshot named `alices`"), "{e}");

    // Alice's own restore over HTTP works, and Bob's computer is untouched.
    out(&alice, &a, "rm ~/mine.txt").await;
    ok(
        &alice,
        "restore_snapshot",
        json!({"session_id": a, "name": "alices"}),
    )
    .await;
    assert_eq!(out(&alice, &a, "cat ~/mine.txt").await, "alice");
    assert_eq!(out(&bob, &b, "echo still").await, "still");
}

/// `computer-use-mcp snapshot …` and `reset` for a person at a terminal.
#[tokio::test(flavor = "multi_thread")]
async fn the_snapshot_commands_save_list_restore_reset_and_remove() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[]).await;
    let sid = start_session(&client, "a person's commands").await;
    out(&client, &sid, "echo mine > ~/kept.txt").await;
    let run = |args: &[&str]| {
        let output = std::process::Command::new(crate::support::mcp::host_bin())
            .args(args)
            .env("COMPUTER_USE_NAME", &computer.name)
            .env("COMPUTER_USE_PORT_BASE", computer.port_base.to_string())
            .env("COMPUTER_USE_IMAGE", crate::support::docker::image())
            .output()
            .expect("the host binary runs");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).to_string(),
            String::from_utf8_lossy(&output.stderr).to_string(),
        )
    };
    let (code, said, _) = run(&["snapshot", "save", "by-hand", "--note", "from the terminal"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("saved snapshot `by-hand`"), "{said}");
    let (_, listed, _) = run(&["snapshot", "list"]);
    assert!(
        listed.contains("by-hand") && listed.contains("from the terminal"),
        "{listed}"
    );
    let (_, info, _) = run(&["info"]);
    assert!(
        info.contains("snapshots: 1 using ") && info.contains("by-hand"),
        "{info}"
    );

    let (code, _, why) = run(&["snapshot", "restore", "by-hand"]);
    assert_eq!(code, Some(2));
    assert!(why.contains("--yes"), "{why}");
    let (code, _, why) = run(&["snapshot", "restore", "by-hand", "--yes"]);
    assert_eq!(code, Some(1));
    assert!(
        why.contains(&sid) && why.contains("--end-sessions"),
        "{why}"
    );

    let (code, said, why) = run(&["reset", "--yes", "--end-sessions"]);
    assert_eq!(code, Some(0), "{why}");
    assert!(said.contains("ended 1 session"), "{said}");
    let sid = start_session(&client, "after the reset").await;
    assert_eq!(
        out(&client, &sid, "cat ~/kept.txt || echo gone").await,
        "gone"
    );
    let (code, _, why) = run(&["snapshot", "restore", "by-hand", "--yes", "--end-sessions"]);
    assert_eq!(code, Some(0), "{why}");
    let sid = start_session(&client, "after the restore").await;
    assert_eq!(out(&client, &sid, "cat ~/kept.txt").await, "mine");

    let (code, said, _) = run(&["snapshot", "rm", "by-hand", "--yes"]);
    assert_eq!(code, Some(0));
    assert!(said.contains("deleted snapshot `by-hand`"), "{said}");
    let (code, _, why) = run(&["snapshot", "rm", "by-hand", "--yes"]);
    assert_eq!(code, Some(1));
    assert!(why.contains("has no snapshot named `by-hand`"), "{why}");
}

/// `COMPUTER_USE_IDLE_STOP`: with no session and no viewer for that long,
/// the computer stops; the next `start_computer` starts it with its home.
#[tokio::test(flavor = "multi_thread")]
async fn an_unused_computer_stops_and_starts_again_with_its_home() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[("COMPUTER_USE_IDLE_STOP", "2s")]).await;
    let sid = start_session(&client, "then idle").await;
    out(&client, &sid, "echo kept > ~/kept.txt").await;
    // That a live session keeps it up however long is computerd's unit
    // test (`sessions::unused`), on a paused clock.
    ok(&client, "end_session", json!({"session_id": sid})).await;
    let ended = std::time::Instant::now();
    let running = || inspect(&computer.name)["State"]["Running"] == json!(true);
    while running() {
        assert!(
            ended.elapsed() < std::time::Duration::from_secs(30),
            "still running 30 s after its last session ended"
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    let state = &inspect(&computer.name)["State"];
    assert_eq!(state["ExitCode"], json!(0), "a clean stop: {state}");
    let (again, _) = ok(&client, "start_computer", json!({"title": "back"})).await;
    assert_eq!(again["computer"]["state"], json!("started"), "{again}");
    let sid = again["session_id"].as_str().unwrap();
    assert_eq!(out(&client, sid, "cat ~/kept.txt").await, "kept");
}

/// Sets or clears the immutable flag of `path` in the home volume `volume`,
/// from a container of the image with the one capability it takes (the
/// computer has not got it): a file the restore cannot move aside.
fn immutable(volume: &str, path: &str, on: bool) {
    let script = format!(
        "import fcntl, os, struct; fd = os.open('/h/{path}', os.O_RDONLY); \
         fcntl.ioctl(fd, 0x40086602, struct.pack('i', {}))",
        if on { 0x10 } else { 0 }
    );
    crate::support::docker::docker(&[
        "run",
        "--rm",
        "--user",
        "0",
        "--network",
        "none",
        "--cap-add",
        "LINUX_IMMUTABLE",
        "--entrypoint",
        "python3",
        "-v",
        &format!("{volume}:/h"),
        &crate::support::docker::image(),
        "-c",
        &script,
    ]);
}

/// A restore that fails once the computer is stopped starts the old
/// computer again with its home as it was, says so, and the caller's
/// session goes on.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_restore_leaves_the_computer_as_it_was() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[]).await;
    let me = start_session(&client, "a failing restore").await;
    out(&client, &me, "echo before > ~/a.txt").await;
    ok(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "saved"}),
    )
    .await;
    out(
        &client,
        &me,
        "echo after > ~/a.txt && echo new > ~/b.txt && touch ~/locked",
    )
    .await;
    immutable(&computer.volume(), "locked", true);
    // Cleared whatever happens, or the home volume could not be removed.
    struct Unlock(String);
    impl Drop for Unlock {
        fn drop(&mut self) {
            immutable(&self.0, "locked", false);
        }
    }
    let _unlock = Unlock(computer.volume());
    let id_before = inspect(&computer.name)["Id"].clone();

    let failed = refused(
        &client,
        "restore_snapshot",
        json!({"session_id": me, "name": "saved"}),
    )
    .await;
    assert!(
        failed.contains("The computer runs as it was, with the same home")
            && failed.contains(&format!("Your session {me} goes on")),
        "{failed}"
    );
    assert_eq!(
        inspect(&computer.name)["Id"],
        id_before,
        "the same container"
    );
    assert_eq!(inspect(&computer.name)["State"]["Running"], json!(true));
    assert_eq!(
        out(&client, &me, "cat ~/a.txt ~/b.txt; test -e ~/locked && echo locked; ls -A ~ | grep -c computer-use-restore || true").await,
        "after\nnew\nlocked\n0"
    );
}

/// A save the engine's disk cannot hold (here: more spare disk asked for
/// than the machine has) is refused with the figures once the copier has
/// measured, and leaves the computer running, unpaused, with nothing made.
#[tokio::test(flavor = "multi_thread")]
async fn a_save_the_disk_cannot_hold_is_refused_and_changes_nothing() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[("COMPUTER_USE_SNAPSHOT_SPARE_MB", "1048576")]).await;
    let me = start_session(&client, "a short disk").await;
    out(&client, &me, "echo mine > ~/mine.txt").await;
    let short = refused(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "too-big"}),
    )
    .await;
    assert!(
        short.contains("the engine's disk is short: the snapshot needs ")
            && short.contains("beyond the 1.1 TB kept spare (COMPUTER_USE_SNAPSHOT_SPARE_MB)")
            && short.contains("nothing was saved and the computer runs as it was"),
        "{short}"
    );
    assert_eq!(inspect(&computer.name)["State"]["Status"], json!("running"));
    let label = format!("label=computer-use.snapshot.of={}", computer.name);
    for kind in [&["images", "-q"][..], &["volume", "ls", "-q"][..]] {
        let args = [kind, &["--filter", &label][..]].concat();
        assert_eq!(crate::support::docker::docker(&args).trim(), "", "{args:?}");
    }
    assert_eq!(out(&client, &me, "cat ~/mine.txt").await, "mine");
    let (listed, _) = ok(&client, "list_snapshots", json!({"session_id": me})).await;
    assert!(names(&listed).is_empty(), "{listed}");
}
