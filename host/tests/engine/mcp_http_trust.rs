//! What an HTTP client may reach of the server's files: only what lies
//! beneath `COMPUTER_USE_TRANSFER_ROOT`, racing downloads included, and no
//! more than a folder's quota. Tenants and the listener's limits are
//! `mcp_http_tenants`'. The real host binary over HTTP, against the real
//! engine.

use crate::support::docker::TestComputer;
use crate::support::mcp::{call, ok, refused, shell_ok, start_session, text, Client, HttpHost};
use serde_json::{json, Value};

pub(crate) const ALICE: &str = "alice-token-0123456789abcdef0123456789";
pub(crate) const BOB: &str = "bob-token-0123456789abcdef0123456789abcd";

pub(crate) fn transfer(sid: &str, direction: &str, host_path: &str, computer_path: &str) -> Value {
    json!({
        "session_id": sid, "direction": direction,
        "host_path": host_path, "computer_path": computer_path
    })
}

/// Whether `path` exists inside the session's computer.
pub(crate) async fn on_computer(client: &Client, sid: &str, path: &str) -> bool {
    let r = shell_ok(
        client,
        sid,
        &format!("test -e {path} && echo yes || echo no"),
    )
    .await;
    r["stdout"] == "yes\n"
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_transfer_root_file_transfer_is_refused_over_http() {
    let computer = TestComputer::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("note.txt");
    std::fs::write(&file, "from the server's disk").unwrap();
    // An empty value counts as unset.
    let host = HttpHost::start(&computer, &[("COMPUTER_USE_TRANSFER_ROOT", "")]).await;
    let client = host.client().await;
    let sid = start_session(&client, "no root").await;

    let up = transfer(&sid, "to_computer", file.to_str().unwrap(), "~/note.txt");
    let e = refused(&client, "file_transfer", up).await;
    assert!(e.contains("`COMPUTER_USE_TRANSFER_ROOT` is not set"), "{e}");
    assert!(!on_computer(&client, &sid, "~/note.txt").await);

    shell_ok(&client, &sid, "echo payload > ~/payload.txt").await;
    let target = dir.path().join("payload.txt");
    let down = transfer(
        &sid,
        "from_computer",
        target.to_str().unwrap(),
        "~/payload.txt",
    );
    let e = refused(&client, "file_transfer", down).await;
    assert!(e.contains("COMPUTER_USE_TRANSFER_ROOT"), "{e}");
    assert!(!target.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn transfers_stay_beneath_the_root_and_every_escape_writes_nothing() {
    let computer = TestComputer::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("inside.txt"), "inside").unwrap();
    std::fs::write(dir.path().join("secret"), "outside").unwrap();
    std::os::unix::fs::symlink(dir.path(), root.join("out")).unwrap();
    let root_var = root.to_str().unwrap();
    let host = HttpHost::start(&computer, &[("COMPUTER_USE_TRANSFER_ROOT", root_var)]).await;
    let client = host.client().await;
    let sid = start_session(&client, "root").await;

    // Inside: both directions work, with paths relative to the root.
    ok(
        &client,
        "file_transfer",
        transfer(&sid, "to_computer", "inside.txt", "~/inside.txt"),
    )
    .await;
    assert!(on_computer(&client, &sid, "~/inside.txt").await);
    let absolute_inside = root.join("inside.txt");
    ok(
        &client,
        "file_transfer",
        transfer(
            &sid,
            "to_computer",
            absolute_inside.to_str().unwrap(),
            "~/again.txt",
        ),
    )
    .await;
    shell_ok(&client, &sid, "echo payload > ~/payload.txt").await;
    std::fs::create_dir(root.join("copies")).unwrap();
    ok(
        &client,
        "file_transfer",
        transfer(&sid, "from_computer", "copies/", "~/payload.txt"),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(root.join("copies/payload.txt")).unwrap(),
        "payload\n"
    );

    // Reading out: absolute, `..`, a symlink, `~`.
    let secret = dir.path().join("secret");
    for (typed, why) in [
        (secret.to_str().unwrap(), "absolute path outside"),
        ("../secret", "`..`"),
        ("out/secret", "symlink"),
        ("out", "symlink"),
        ("~/.ssh", "home"),
    ] {
        let e = refused(
            &client,
            "file_transfer",
            transfer(&sid, "to_computer", typed, "~/stolen"),
        )
        .await;
        assert!(
            e.contains(why) && e.contains("COMPUTER_USE_TRANSFER_ROOT"),
            "{typed}: {e}"
        );
        assert!(
            !on_computer(&client, &sid, "~/stolen").await,
            "{typed} reached the computer"
        );
    }

    // Writing out: the same ways, and nothing appears outside the root.
    let planted = dir.path().join("planted");
    for typed in [
        planted.to_str().unwrap(),
        "../planted",
        "out/planted",
        "out/new/planted",
    ] {
        let e = refused(
            &client,
            "file_transfer",
            transfer(&sid, "from_computer", typed, "~/payload.txt"),
        )
        .await;
        assert!(e.contains("COMPUTER_USE_TRANSFER_ROOT"), "{typed}: {e}");
    }
    let outside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut outside = outside;
    outside.sort();
    assert_eq!(outside, ["root", "secret"], "a download escaped the root");
}

/// Two downloads raced, round after round: the first writes a file at
/// `d/s/new/authorized_keys` (missing when it is resolved), the second
/// merges a folder holding `s/new`, a link to a folder outside the root,
/// into `d`. Were the link made, the first could land in it between its
/// check and its write. Beneath a root, links that may lead out of the copy
/// are not made, so no round can escape, whichever wins.
#[tokio::test(flavor = "multi_thread")]
async fn racing_downloads_cannot_lead_each_other_out_of_the_root() {
    const ROUNDS: usize = 200;
    let computer = TestComputer::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let outside = dir.path().join("outside");
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(&outside).unwrap();
    let host = HttpHost::start(
        &computer,
        &[("COMPUTER_USE_TRANSFER_ROOT", root.to_str().unwrap())],
    )
    .await;
    let client = host.client().await;
    let sid = start_session(&client, "race").await;
    shell_ok(
        &client,
        &sid,
        &format!(
            "mkdir -p /tmp/s && ln -sfn {} /tmp/s/new && echo planted-key > /tmp/k",
            outside.display()
        ),
    )
    .await;

    let mut skipped_seen = false;
    for round in 0..ROUNDS {
        let _ = std::fs::remove_dir_all(root.join("d"));
        let file = call(
            &client,
            "file_transfer",
            transfer(&sid, "from_computer", "d/s/new/authorized_keys", "/tmp/k"),
        );
        let mut merge = transfer(&sid, "from_computer", "d", "/tmp/s");
        merge["overwrite"] = json!(true);
        let folder = call(&client, "file_transfer", merge);
        let (_, folder) = tokio::join!(file, folder);
        skipped_seen |= text(&folder).contains("transfer root");
        let escaped: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
        assert!(
            escaped.is_empty(),
            "round {round}: a download wrote outside the root: {escaped:?}"
        );
    }
    assert!(
        skipped_seen,
        "the link out was never listed as skipped in a report"
    );
    // Nothing beneath the root is a link.
    let mut stack = vec![root.clone()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            assert!(!kind.is_symlink(), "{} is a link", entry.path().display());
            if kind.is_dir() {
                stack.push(entry.path());
            }
        }
    }
}

/// A root folder holds at most `COMPUTER_USE_TRANSFER_QUOTA_MB`: a download
/// past it stops with what it wrote said and its temporary file gone, one
/// into a full folder takes nothing, and one that fits goes through.
#[tokio::test(flavor = "multi_thread")]
async fn downloads_stop_at_the_folders_quota() {
    let computer = TestComputer::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let host = HttpHost::start(
        &computer,
        &[
            ("COMPUTER_USE_TRANSFER_ROOT", root.to_str().unwrap()),
            ("COMPUTER_USE_TRANSFER_QUOTA_MB", "2"),
        ],
    )
    .await;
    let client = host.client().await;
    let sid = start_session(&client, "quota").await;
    shell_ok(
        &client,
        &sid,
        "head -c 5000000 /dev/urandom > /tmp/big && echo small > /tmp/small",
    )
    .await;

    let e = refused(
        &client,
        "file_transfer",
        transfer(&sid, "from_computer", "big", "/tmp/big"),
    )
    .await;
    assert!(
        e.contains("COMPUTER_USE_TRANSFER_QUOTA_MB")
            && e.contains("2.1 MB")
            && e.contains("stopped after"),
        "{e}"
    );
    let left: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "the stopped download left {left:?}");

    ok(
        &client,
        "file_transfer",
        transfer(&sid, "from_computer", "small", "/tmp/small"),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(root.join("small")).unwrap(),
        "small\n"
    );

    // The operator's own files count too: a full folder takes nothing.
    std::fs::write(root.join("filler"), vec![0u8; 2 * 1024 * 1024]).unwrap();
    let e = refused(
        &client,
        "file_transfer",
        transfer(&sid, "from_computer", "again", "/tmp/small"),
    )
    .await;
    assert!(e.contains("stopped after 0 files"), "{e}");
    assert!(!root.join("again").exists());
}
