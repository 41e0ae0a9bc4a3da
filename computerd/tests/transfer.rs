//! `file_transfer`'s routes on a real computerd: uploads and downloads of
//! real trees, the destination and overwrite rules, a conflict partway,
//! crafted archives posted straight to the endpoint, and transfers that stop
//! (session ended, client gone) leaving no temporary files.

mod common;

use bytes::Bytes;
use common::daemon::TOKEN;
use common::{wait_until, Daemon};
use computer_protocol::archive::{
    pack, plan, unpack, Destination, Progress, UnpackOptions, TEMP_PREFIX,
};
use computer_protocol::ItemKind;
use futures::SinkExt;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs;
use std::hash::{Hash, Hasher};
use std::io;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Everything under `root`: relative path → kind, mode, and a checksum of
/// the content or the link target.
fn manifest(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let desc = if meta.is_symlink() {
                format!("link -> {}", fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                walk(root, &path, out);
                format!("dir {mode:o}")
            } else if meta.is_file() {
                let content = fs::read(&path).unwrap();
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                content.hash(&mut hasher);
                format!(
                    "file {mode:o} {} bytes #{:016x}",
                    content.len(),
                    hasher.finish()
                )
            } else {
                "other".into()
            };
            out.insert(rel, desc);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn temp_files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                found.push(entry.path());
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    found
}

/// A tree with binary content, modes, nested and empty folders, symlinks,
/// and a pipe that is skipped and listed.
fn sample_tree(root: &Path) {
    fs::create_dir_all(root.join("src/nested/deeper")).unwrap();
    fs::create_dir_all(root.join("empty/also-empty")).unwrap();
    let binary: Vec<u8> = (0..3_000_000u64).map(|i| (i * 7919 % 251) as u8).collect();
    fs::write(root.join("data.bin"), &binary).unwrap();
    fs::write(root.join("run.sh"), "#!/bin/sh\necho ok\n").unwrap();
    fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(root.join("private"), "p").unwrap();
    fs::set_permissions(root.join("private"), fs::Permissions::from_mode(0o600)).unwrap();
    fs::write(root.join("src/nested/deeper/lib.rs"), "pub fn f() {}\n").unwrap();
    symlink("nested/deeper/lib.rs", root.join("src/lib-link")).unwrap();
    symlink("/etc/os-release", root.join("absolute-link")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(root.join("fifo"))
        .status()
        .unwrap();
    assert!(status.success());
}

fn packed(source: &Path, kind: ItemKind) -> Vec<u8> {
    let name = source.file_name().unwrap().to_str().unwrap();
    pack(source, name, kind, Vec::new(), &Progress::default())
        .unwrap()
        .0
}

fn upload_url(d: &Daemon, sid: &str) -> String {
    d.url(&format!("/v1/sessions/{sid}/transfer/upload"))
}

fn query(path: &str, name: &str, kind: &str, overwrite: bool) -> Vec<(&'static str, String)> {
    vec![
        ("path", path.to_string()),
        ("name", name.to_string()),
        ("kind", kind.to_string()),
        ("overwrite", overwrite.to_string()),
    ]
}

async fn upload(
    d: &Daemon,
    sid: &str,
    query: &[(&str, String)],
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let resp = d
        .raw()
        .post(upload_url(d, sid))
        .query(query)
        .bearer_auth(TOKEN)
        .body(body)
        .send()
        .await
        .expect("computerd answers");
    let status = resp.status();
    (status, resp.json().await.expect("JSON answer"))
}

async fn download(d: &Daemon, sid: &str, path: &str) -> reqwest::Response {
    d.raw()
        .post(d.url(&format!("/v1/sessions/{sid}/transfer/download")))
        .bearer_auth(TOKEN)
        .json(&json!({ "path": path }))
        .send()
        .await
        .expect("computerd answers")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tree_goes_up_and_comes_back_the_same() {
    let d = Daemon::start().await;
    let sid = d.create_session("transfer").await;
    let src = tempfile::tempdir().unwrap();
    let proj = src.path().join("proj");
    sample_tree(&proj);

    // Up into home, an existing folder: the copy lands at ~/proj.
    let (status, summary) = upload(
        &d,
        &sid,
        &query("~", "proj", "folder", false),
        packed(&proj, ItemKind::Folder),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    let home = d.home.path();
    assert_eq!(summary["path"], home.join("proj").display().to_string());
    assert_eq!(summary["files"], 4);
    assert_eq!(summary["folders"], 6);
    assert_eq!(summary["symlinks"], 2);
    assert_eq!(summary["bytes"], 3_000_000 + 18 + 1 + 14);
    assert_eq!(
        summary["skipped"],
        json!([{"path": "proj/fifo", "kind": "pipe", "reason": "a named pipe holds no data to copy"}])
    );
    let mut expected = manifest(&proj);
    expected.remove("fifo");
    assert_eq!(manifest(&home.join("proj")), expected);

    // And back down, through the stream the host reads.
    let resp = download(&d, &sid, "proj").await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "application/x-tar");
    let archive = resp.bytes().await.unwrap();
    let back = tempfile::tempdir().unwrap();
    let target = plan(&Destination {
        path: back.path(),
        trailing_slash: false,
        name: "proj",
        kind: ItemKind::Folder,
        overwrite: false,
        windows_names: false,
        arg: "host_path",
    })
    .unwrap();
    let summary = unpack(
        &archive[..],
        &target,
        UnpackOptions::default(),
        &Progress::default(),
    )
    .unwrap();
    assert_eq!(manifest(&back.path().join("proj")), expected);
    assert!(summary.skipped.is_empty(), "{:?}", summary.skipped);

    // A single file, under a new name in folders that do not exist yet.
    let (status, summary) = upload(
        &d,
        &sid,
        &query("new/parents/renamed.bin", "data.bin", "file", false),
        packed(&proj.join("data.bin"), ItemKind::File),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    assert_eq!(
        fs::read(home.join("new/parents/renamed.bin")).unwrap(),
        fs::read(proj.join("data.bin")).unwrap()
    );
    assert!(temp_files(home).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_check_applies_the_destination_rules_before_any_data_moves() {
    let d = Daemon::start().await;
    let sid = d.create_session("check").await;
    let home = d.home.path();
    fs::create_dir(home.join("Downloads")).unwrap();
    fs::write(home.join("Downloads/report.pdf"), "old").unwrap();
    fs::create_dir(home.join("Downloads/proj")).unwrap();
    let check = |body: Value| {
        let d = &d;
        let sid = sid.clone();
        async move {
            d.post(&format!("/v1/sessions/{sid}/transfer/check"), body)
                .await
        }
    };

    let (status, v) = check(json!({"path": "Downloads", "name": "new.pdf", "kind": "file"})).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(
        v,
        json!({"path": home.join("Downloads/new.pdf").display().to_string(), "exists": false})
    );

    let (status, v) =
        check(json!({"path": "~/fresh/name.pdf", "name": "report.pdf", "kind": "file"})).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["path"], home.join("fresh/name.pdf").display().to_string());
    assert!(!home.join("fresh").exists(), "a check creates nothing");

    let report = home.join("Downloads/report.pdf").display().to_string();
    let (status, v) =
        check(json!({"path": "Downloads", "name": "report.pdf", "kind": "file"})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        v["message"],
        format!("`{report}` already exists (a file): set `overwrite` to true to replace files and merge folders, or choose another `computer_path`")
    );
    let (status, v) = check(
        json!({"path": "Downloads", "name": "report.pdf", "kind": "file", "overwrite": true}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["exists"], true);

    let (status, v) =
        check(json!({"path": "Downloads", "name": "proj", "kind": "file", "overwrite": true}))
            .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("only a folder can merge into a folder"),
        "{v}"
    );
    let (status, v) = check(
        json!({"path": "Downloads/report.pdf", "name": "x", "kind": "folder", "overwrite": true}),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("a folder cannot take its place"),
        "{v}"
    );

    let (status, v) = check(json!({"path": "missing/", "name": "a.txt", "kind": "file"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("ends with `/` but is not a folder"),
        "{v}"
    );

    let (status, v) =
        check(json!({"path": "~/Downloads/report.pdf/inside", "name": "a", "kind": "file"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{v}");
    assert_eq!(
        v["message"],
        format!("`{report}` is a file, so no folder can be made inside it: choose another `computer_path`")
    );

    let (status, v) = check(json!({"path": "x", "name": "../up", "kind": "file"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    let (status, v) = check(json!({"path": "x", "name": "a", "kind": "file", "colour": 1})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert!(v["message"].as_str().unwrap().contains("colour"), "{v}");

    // The upload applies the same rules before it reads its body.
    let (status, v) = upload(
        &d,
        &sid,
        &query("Downloads", "report.pdf", "file", false),
        vec![0; 4096],
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{v}");
    assert_eq!(
        fs::read_to_string(home.join("Downloads/report.pdf")).unwrap(),
        "old"
    );
    let resp = d
        .raw()
        .post(upload_url(&d, &sid))
        .query(&[("path", "x")])
        .bearer_auth(TOKEN)
        .body(Vec::new())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let v: Value = resp.json().await.unwrap();
    assert!(v["message"].as_str().unwrap().contains("`name`"), "{v}");

    // Downloads say up front what they would send.
    let (status, v) = d
        .post(
            &format!("/v1/sessions/{sid}/transfer/source"),
            json!({"path": "Downloads"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(
        v,
        json!({"path": home.join("Downloads").display().to_string(), "name": "Downloads", "kind": "folder"})
    );
    let resp = download(&d, &sid, "nothing-here").await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(
        v["message"],
        format!(
            "`{}` does not exist: check `computer_path`",
            home.join("nothing-here").display()
        )
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn overwrite_merges_and_a_conflict_partway_says_how_far_it_got() {
    let d = Daemon::start().await;
    let sid = d.create_session("overwrite").await;
    let home = d.home.path();
    let src = tempfile::tempdir().unwrap();
    let proj = src.path().join("proj");
    fs::create_dir_all(proj.join("sub")).unwrap();
    fs::write(proj.join("a.txt"), "new a").unwrap();
    fs::write(proj.join("sub/b.txt"), "new b").unwrap();
    fs::create_dir_all(home.join("proj/sub")).unwrap();
    fs::write(home.join("proj/a.txt"), "old a").unwrap();
    fs::write(home.join("proj/sub/mine.txt"), "mine").unwrap();

    let (status, v) = upload(
        &d,
        &sid,
        &query("~", "proj", "folder", false),
        packed(&proj, ItemKind::Folder),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{v}");
    assert_eq!(
        fs::read_to_string(home.join("proj/a.txt")).unwrap(),
        "old a"
    );

    let (status, v) = upload(
        &d,
        &sid,
        &query("~", "proj", "folder", true),
        packed(&proj, ItemKind::Folder),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(
        fs::read_to_string(home.join("proj/a.txt")).unwrap(),
        "new a"
    );
    assert_eq!(
        fs::read_to_string(home.join("proj/sub/b.txt")).unwrap(),
        "new b"
    );
    assert_eq!(
        fs::read_to_string(home.join("proj/sub/mine.txt")).unwrap(),
        "mine"
    );

    // Three files go in, then a file meets a folder of the same name.
    let mut builder = tar::Builder::new(Vec::new());
    builder.append_dir("proj", &proj).unwrap();
    for (name, content) in [
        ("1", "one"),
        ("2", "two"),
        ("3", "three"),
        ("sub", "a file"),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        builder
            .append_data(&mut header, format!("proj/{name}"), content.as_bytes())
            .unwrap();
    }
    let (status, v) = upload(
        &d,
        &sid,
        &query("~", "proj", "folder", true),
        builder.into_inner().unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{v}");
    let sub = home.join("proj/sub").display().to_string();
    assert_eq!(
        v["message"],
        format!("stopped at `{sub}`, which is a folder, and the copy has a file there: only a folder can merge into a folder; 3 files, 1 folder and 0 symlinks (11 bytes) were written before it and stay in place: move `{sub}` away, then copy again")
    );
    assert_eq!(fs::read_to_string(home.join("proj/3")).unwrap(), "three");
    assert!(home.join("proj/sub").is_dir());
    assert!(temp_files(home).is_empty());
}

/// One tar entry with any name at all: the tar crate's own writer refuses
/// the names an attacker would use.
fn raw_entry(out: &mut Vec<u8>, name: &str, kind: tar::EntryType, link: &str, data: &[u8]) {
    let mut header = tar::Header::new_gnu();
    {
        let gnu = header.as_gnu_mut().unwrap();
        gnu.name[..name.len()].copy_from_slice(name.as_bytes());
        gnu.linkname[..link.len()].copy_from_slice(link.as_bytes());
    }
    header.set_entry_type(kind);
    header.set_size(data.len() as u64);
    header.set_mode(0o755);
    header.set_cksum();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crafted_archive_writes_nothing_outside_its_destination() {
    use tar::EntryType::{Directory, Link, Regular, Symlink};
    let d = Daemon::start().await;
    let sid = d.create_session("attack").await;
    let home = d.home.path();
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = outside_dir.path();
    fs::write(outside.join("victim"), "untouched").unwrap();
    let before = manifest(outside);
    fs::create_dir(home.join("dest")).unwrap();

    let o = outside.display();
    let mut archive = Vec::new();
    raw_entry(&mut archive, "drop/", Directory, "", b"");
    raw_entry(&mut archive, "drop/ok.txt", Regular, "", b"fine");
    raw_entry(
        &mut archive,
        "drop/../../../../../../../../tmp/dotdot",
        Regular,
        "",
        b"x",
    );
    let absolute = format!("{o}/absolute");
    raw_entry(&mut archive, &absolute, Regular, "", b"x");
    raw_entry(&mut archive, "drop/link", Symlink, &o.to_string(), b"");
    raw_entry(&mut archive, "drop/link/through", Regular, "", b"x");
    raw_entry(&mut archive, "drop/link/victim", Regular, "", b"replaced");
    raw_entry(&mut archive, "drop/link/sub/", Directory, "", b"");
    let victim = format!("{o}/victim");
    raw_entry(&mut archive, "drop/hard", Link, &victim, b"");
    raw_entry(&mut archive, "drop/hard-up", Link, "drop/../../victim", b"");
    raw_entry(
        &mut archive,
        "drop/hard-through",
        Link,
        "drop/link/victim",
        b"",
    );
    archive.extend_from_slice(&[0; 1024]);

    let (status, v) = upload(&d, &sid, &query("dest", "drop", "folder", false), archive).await;
    assert_eq!(status, StatusCode::OK, "{v}");

    assert_eq!(manifest(outside), before, "nothing outside changed");
    assert!(!Path::new("/tmp/dotdot").exists());
    let inside: Vec<String> = manifest(&home.join("dest")).into_keys().collect();
    assert_eq!(inside, ["drop", "drop/link", "drop/ok.txt"]);
    let refused: Vec<&str> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "refused")
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        refused,
        [
            "drop/../../../../../../../../tmp/dotdot",
            absolute.as_str(),
            "drop/link/through",
            "drop/link/victim",
            "drop/link/sub",
            "drop/hard",
            "drop/hard-up",
            "drop/hard-through",
        ],
        "{v}"
    );
    let reasons: Vec<&str> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["reason"].as_str().unwrap())
        .collect();
    assert!(reasons[0].contains("`..`"), "{reasons:?}");
    assert!(reasons[1].contains("absolute"), "{reasons:?}");
    assert!(reasons[2].contains("symlink"), "{reasons:?}");
}

/// An upload whose body the test feeds by hand: the start of an archive
/// with one large file, more to come.
struct OpenUpload {
    body: futures::channel::mpsc::Sender<io::Result<Bytes>>,
    call: tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>,
}

async fn open_upload(d: &Daemon, sid: &str, dest: &str) -> OpenUpload {
    let (mut body, rx) = futures::channel::mpsc::channel(4);
    let request = d
        .raw()
        .post(upload_url(d, sid))
        .query(&query(dest, "big", "folder", false))
        .bearer_auth(TOKEN)
        .body(reqwest::Body::wrap_stream(rx));
    let call = tokio::spawn(request.send());
    let mut start = Vec::new();
    raw_entry(&mut start, "big/", tar::EntryType::Directory, "", b"");
    let mut header = tar::Header::new_gnu();
    header.set_path("big/huge.bin").unwrap();
    header.set_size(1 << 30);
    header.set_mode(0o644);
    header.set_cksum();
    start.extend_from_slice(header.as_bytes());
    start.extend_from_slice(&vec![1u8; 1 << 20]);
    body.send(Ok(Bytes::from(start))).await.unwrap();
    OpenUpload { body, call }
}

#[tokio::test(flavor = "multi_thread")]
async fn ending_the_session_stops_an_upload_and_removes_its_temporary_files() {
    let d = Daemon::start().await;
    let sid = d.create_session("ends").await;
    let folder = d.home.path().join("big");
    let upload = open_upload(&d, &sid, "~").await;
    wait_until(
        "the upload's temporary file",
        Duration::from_secs(10),
        || {
            let found = !temp_files(&folder).is_empty();
            async move { found.then_some(()) }
        },
    )
    .await;

    let (status, v) = d.call("DELETE", &format!("/v1/sessions/{sid}"), None).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let resp = upload
        .call
        .await
        .unwrap()
        .expect("the answer arrives while the body is still open");
    assert_eq!(resp.status(), StatusCode::GONE);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["code"], "session_ended", "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("start_computer"),
        "{v}"
    );
    drop(upload.body);
    wait_until("temporary files removed", Duration::from_secs(10), || {
        let gone = temp_files(&folder).is_empty();
        async move { gone.then_some(()) }
    })
    .await;
    assert!(!folder.join("huge.bin").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_goes_away_leaves_no_temporary_files() {
    let d = Daemon::start().await;
    let sid = d.create_session("gone").await;
    let folder = d.home.path().join("big");
    let upload = open_upload(&d, &sid, "~").await;
    wait_until(
        "the upload's temporary file",
        Duration::from_secs(10),
        || {
            let found = !temp_files(&folder).is_empty();
            async move { found.then_some(()) }
        },
    )
    .await;
    upload.call.abort();
    drop(upload.body);
    wait_until("temporary files removed", Duration::from_secs(10), || {
        let gone = temp_files(&folder).is_empty();
        async move { gone.then_some(()) }
    })
    .await;
    assert!(!folder.join("huge.bin").exists());
    // The session is still there for the next call.
    let (status, _) = d
        .post(&format!("/v1/sessions/{sid}/files/list"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_download_cut_by_the_session_ending_ends_in_an_error() {
    let d = Daemon::start().await;
    let sid = d.create_session("cut").await;
    let file = fs::File::create(d.home.path().join("large.bin")).unwrap();
    file.set_len(256 << 20).unwrap();
    let mut resp = download(&d, &sid, "large.bin").await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.chunk().await.unwrap().is_some());
    let (status, _) = d.call("DELETE", &format!("/v1/sessions/{sid}"), None).await;
    assert_eq!(status, StatusCode::OK);
    let mut received = 0usize;
    let end = loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => received += chunk.len(),
            Ok(None) => break Ok(received),
            Err(e) => break Err(e),
        }
    };
    assert!(end.is_err(), "the stream must not end cleanly: {end:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_transfer_keeps_its_session_from_going_idle() {
    let d = Daemon::start().await;
    let v = d
        .ok(
            "/v1/sessions",
            json!({"title": "slow", "owner": "o", "settings": {"idle_timeout_secs": 1}}),
        )
        .await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    let (mut body, rx) = futures::channel::mpsc::channel::<io::Result<Bytes>>(4);
    let request = d
        .raw()
        .post(upload_url(&d, &sid))
        .query(&query("~/slow.bin", "slow.bin", "file", false))
        .bearer_auth(TOKEN)
        .body(reqwest::Body::wrap_stream(rx));
    let call = tokio::spawn(request.send());
    let size = 10 * 1024;
    let mut header = tar::Header::new_gnu();
    header.set_path("slow.bin").unwrap();
    header.set_size(size);
    header.set_mode(0o644);
    header.set_cksum();
    body.send(Ok(Bytes::copy_from_slice(header.as_bytes())))
        .await
        .unwrap();
    // A kilobyte every 250 ms: the transfer takes well over the 1 s idle
    // timeout.
    let mut pace = tokio::time::interval(Duration::from_millis(250));
    for _ in 0..10 {
        pace.tick().await;
        body.send(Ok(Bytes::from(vec![b'x'; 1024]))).await.unwrap();
    }
    // The two zero blocks that end an archive.
    body.send(Ok(Bytes::from(vec![0u8; 1024]))).await.unwrap();
    drop(body);
    let resp = call.await.unwrap().unwrap();
    let status = resp.status();
    let v: Value = resp.json().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["bytes"], size);
    let (_, list) = d.call("GET", "/v1/sessions", None).await;
    assert!(
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["session_id"] == sid),
        "the session outlived its idle timeout while the transfer ran: {list}"
    );
}
