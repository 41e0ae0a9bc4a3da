//! `file_transfer`'s routes on a real computerd: uploads and downloads of
//! real trees, the destination and overwrite rules, a conflict partway,
//! crafted archives posted straight to the endpoint, and transfers that stop
//! (session ended, client gone) leaving no temporary files.

use crate::common::daemon::TOKEN;
use crate::common::{wait_until, Daemon};
use bytes::Bytes;
use computer_protocol::ItemKind;
use futures::SinkExt;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tarball::{packed, raw_entry, target, unpacked};
use test_support::{tarball, tree};
use tree::{build, manifest, temp_files};

/// A tree with binary content, modes, nested and empty folders, symlinks,
/// and a pipe that is skipped and listed.
fn sample_tree(root: &Path) {
    use tree::Item::{Dir, Fifo, File, Link, Mode};
    let binary: Vec<u8> = (0..3_000_000u64).map(|i| (i * 7919 % 251) as u8).collect();
    build(
        root,
        &[
            Dir("src/nested/deeper"),
            Dir("empty/also-empty"),
            File("data.bin", &binary),
            File("run.sh", b"#!/bin/sh\necho ok\n"),
            Mode("run.sh", 0o755),
            File("private", b"p"),
            Mode("private", 0o600),
            File("src/nested/deeper/lib.rs", b"pub fn f() {}\n"),
            Link("src/lib-link", "nested/deeper/lib.rs"),
            Link("absolute-link", "/etc/os-release"),
            Fifo("fifo"),
        ],
    );
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

/// Uploads `source`, packed under its own name, to `dest`.
async fn upload_packed(
    d: &Daemon,
    sid: &str,
    dest: &str,
    source: &Path,
    kind: ItemKind,
    overwrite: bool,
) -> (StatusCode, Value) {
    let name = source.file_name().unwrap().to_str().unwrap();
    let kind_arg = match kind {
        ItemKind::File => "file",
        ItemKind::Folder => "folder",
    };
    let query = query(dest, name, kind_arg, overwrite);
    upload(d, sid, &query, packed(source, kind)).await
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
    let (status, summary) = upload_packed(&d, &sid, "~", &proj, ItemKind::Folder, false).await;
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
    let planned = target(back.path(), "proj", ItemKind::Folder, false).unwrap();
    let summary = unpacked(&archive, &planned).unwrap();
    assert_eq!(manifest(&back.path().join("proj")), expected);
    assert!(summary.skipped.is_empty(), "{:?}", summary.skipped);

    // A single file, under a new name in folders that do not exist yet.
    let (status, summary) = upload_packed(
        &d,
        &sid,
        "new/parents/renamed.bin",
        &proj.join("data.bin"),
        ItemKind::File,
        false,
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
    use tree::Item::{Dir, File};
    let d = Daemon::start().await;
    let sid = d.create_session("overwrite").await;
    let home = d.home.path();
    let src = tempfile::tempdir().unwrap();
    let proj = src.path().join("proj");
    build(
        &proj,
        &[
            Dir("sub"),
            File("a.txt", b"new a"),
            File("sub/b.txt", b"new b"),
        ],
    );
    build(
        &home.join("proj"),
        &[
            Dir("sub"),
            File("a.txt", b"old a"),
            File("sub/mine.txt", b"mine"),
        ],
    );

    let (status, v) = upload_packed(&d, &sid, "~", &proj, ItemKind::Folder, false).await;
    assert_eq!(status, StatusCode::CONFLICT, "{v}");
    assert_eq!(
        fs::read_to_string(home.join("proj/a.txt")).unwrap(),
        "old a"
    );

    let (status, v) = upload_packed(&d, &sid, "~", &proj, ItemKind::Folder, true).await;
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

#[tokio::test]
async fn long_names_and_pax_records_are_capped_and_checked_like_names() {
    use tar::EntryType::{Directory, GNULongName, Regular, XHeader};
    let d = Daemon::start().await;
    let sid = d.create_session("extensions").await;
    let home = d.home.path();
    fs::create_dir(home.join("dest")).unwrap();

    // A pax `path` record is a name like any other: `..` is refused.
    let mut archive = Vec::new();
    raw_entry(&mut archive, "drop/", Directory, "", b"");
    raw_entry(&mut archive, "pax", XHeader, "", b"22 path=drop/../../up\n");
    raw_entry(&mut archive, "drop/plain", Regular, "", b"x");
    archive.extend_from_slice(&[0; 1024]);
    let (status, v) = upload(&d, &sid, &query("dest", "drop", "folder", false), archive).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["skipped"][0]["path"], "drop/../../up", "{v}");
    assert_eq!(v["skipped"][0]["kind"], "refused", "{v}");
    assert!(!home.join("up").exists());

    // A long name that says it holds a gigabyte is refused at its header,
    // before the receiver reads (or holds) any of it.
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(GNULongName);
    header.as_gnu_mut().unwrap().name[..13].copy_from_slice(b"././@LongLink");
    header.set_size(1 << 30);
    header.set_cksum();
    let mut archive = header.as_bytes().to_vec();
    archive.extend_from_slice(&[b'a'; 64 * 1024]);
    let (status, v) = upload(&d, &sid, &query("dest", "big", "folder", false), archive).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    let message = v["message"].as_str().unwrap();
    assert!(
        message.contains("over the limit of 65536 bytes"),
        "{message}"
    );
    assert!(!home.join("dest/big").exists());
    assert_eq!(temp_files(home), Vec::<PathBuf>::new());
}

/// An upload whose body the test feeds by hand, chunk by chunk.
struct OpenUpload {
    body: futures::channel::mpsc::Sender<io::Result<Bytes>>,
    call: tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>,
}

/// Starts an upload with `query`; its body is what the test sends next.
fn start_upload(d: &Daemon, sid: &str, query: &[(&str, String)]) -> OpenUpload {
    let (body, rx) = futures::channel::mpsc::channel(4);
    let request = d
        .raw()
        .post(upload_url(d, sid))
        .query(query)
        .bearer_auth(TOKEN)
        .body(reqwest::Body::wrap_stream(rx));
    OpenUpload {
        body,
        call: tokio::spawn(request.send()),
    }
}

/// The header of a file entry `path` of `size` bytes; its data follows.
fn file_header(path: &str, size: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_path(path).unwrap();
    header.set_size(size);
    header.set_mode(0o644);
    header.set_cksum();
    header
}

/// Where [`open_big_upload`] copies to: `big` in home.
fn big_folder(d: &Daemon) -> PathBuf {
    d.home.path().join("big")
}

/// Starts uploading the folder `big` into home: the start of an archive
/// with one large file, more to come. Returns once computerd is writing
/// that file's temporary file.
async fn open_big_upload(d: &Daemon, sid: &str) -> OpenUpload {
    let mut upload = start_upload(d, sid, &query("~", "big", "folder", false));
    let mut start = Vec::new();
    raw_entry(&mut start, "big/", tar::EntryType::Directory, "", b"");
    start.extend_from_slice(file_header("big/huge.bin", 1 << 30).as_bytes());
    start.extend_from_slice(&vec![1u8; 1 << 20]);
    upload.body.send(Ok(Bytes::from(start))).await.unwrap();
    wait_for_temp_files(&big_folder(d), true).await;
    upload
}

/// Closes the big upload's body, then waits until computerd has removed
/// its temporary files; the copy never appears.
async fn close_big_upload(d: &Daemon, body: futures::channel::mpsc::Sender<io::Result<Bytes>>) {
    drop(body);
    let folder = big_folder(d);
    wait_for_temp_files(&folder, false).await;
    assert!(!folder.join("huge.bin").exists());
}

/// Waits until `folder` holds a temporary file (`present`), or holds none.
async fn wait_for_temp_files(folder: &Path, present: bool) {
    let what = if present {
        "the upload's temporary file"
    } else {
        "temporary files removed"
    };
    wait_until(what, Duration::from_secs(10), || {
        let holds = !temp_files(folder).is_empty();
        async move { (holds == present).then_some(()) }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ending_the_session_stops_an_upload_and_removes_its_temporary_files() {
    let d = Daemon::start().await;
    let sid = d.create_session("ends").await;
    let upload = open_big_upload(&d, &sid).await;

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
    close_big_upload(&d, upload.body).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_goes_away_leaves_no_temporary_files() {
    let d = Daemon::start().await;
    let sid = d.create_session("gone").await;
    let upload = open_big_upload(&d, &sid).await;
    upload.call.abort();
    close_big_upload(&d, upload.body).await;
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
    let OpenUpload { mut body, call } =
        start_upload(&d, &sid, &query("~/slow.bin", "slow.bin", "file", false));
    let size = 10 * 1024;
    let header = file_header("slow.bin", size);
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
