//! The archive engine on real files: what one side packs the other unpacks
//! the same, the destination and overwrite rules hold entry by entry, and
//! crafted archives write nothing outside their destination.
//!
//! Needs the `archive` feature, which the workspace turns on (computerd and
//! the host use it): `cargo test -p computer-protocol --all-features`.
#![cfg(feature = "archive")]

use computer_protocol::archive::{
    pack, plan, unpack, ArchiveError, Destination, Progress, Target, UnpackOptions, TEMP_PREFIX,
};
use computer_protocol::transfer::SkipKind;
use computer_protocol::{ItemKind, TransferSummary};
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

/// Everything under `root` as `relative path → description`: kind, mode,
/// and content or link target.
fn manifest(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
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
                format!(
                    "file {mode:o} {}",
                    String::from_utf8_lossy(&fs::read(&path).unwrap())
                )
            } else {
                "other".to_string()
            };
            out.insert(rel, desc);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn temp_leftovers(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                found.push(path.clone());
            }
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            }
        }
    }
    found
}

fn packed(source: &Path, kind: ItemKind) -> Vec<u8> {
    let name = source.file_name().unwrap().to_str().unwrap();
    let (bytes, _) = pack(source, name, kind, Vec::new(), &Progress::default()).unwrap();
    bytes
}

fn target(
    dest: &Path,
    name: &str,
    kind: ItemKind,
    overwrite: bool,
) -> Result<Target, ArchiveError> {
    plan(&Destination {
        path: dest,
        trailing_slash: false,
        name,
        kind,
        overwrite,
        windows_names: false,
        arg: "host_path",
    })
}

fn unpacked(bytes: &[u8], target: &Target) -> Result<TransferSummary, ArchiveError> {
    unpack(
        bytes,
        target,
        UnpackOptions::default(),
        &Progress::default(),
    )
}

/// A tree with what a transfer must keep: modes, an empty folder, nested
/// folders, relative, absolute and dangling symlinks, a long name, a name
/// that is not UTF-8, and a pipe that must be skipped and listed.
fn sample_tree(root: &Path) {
    fs::create_dir_all(root.join("src/deep/er")).unwrap();
    fs::create_dir(root.join("empty")).unwrap();
    fs::write(root.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(root.join("secret"), "s").unwrap();
    fs::set_permissions(root.join("secret"), fs::Permissions::from_mode(0o600)).unwrap();
    fs::write(root.join("src/deep/er/main.rs"), "fn main() {}\n").unwrap();
    fs::write(root.join("src/empty.txt"), "").unwrap();
    fs::set_permissions(root.join("src/deep"), fs::Permissions::from_mode(0o750)).unwrap();
    symlink("deep/er/main.rs", root.join("src/link")).unwrap();
    symlink("/etc/hostname", root.join("abs-link")).unwrap();
    symlink("nowhere", root.join("dangling")).unwrap();
    let long = "n".repeat(150);
    fs::write(root.join("src").join(&long), "long name").unwrap();
    use std::os::unix::ffi::OsStrExt;
    fs::write(
        root.join(std::ffi::OsStr::from_bytes(b"caf\xe9")),
        "latin-1",
    )
    .unwrap();
    let fifo = std::ffi::CString::new(root.join("pipe").to_str().unwrap()).unwrap();
    // SAFETY: a valid C string naming a path in our temp folder.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
}

#[test]
fn a_folder_round_trips_with_modes_symlinks_and_empty_folders() {
    let src = tempfile::tempdir().unwrap();
    let root = src.path().join("proj");
    sample_tree(&root);
    let bytes = packed(&root, ItemKind::Folder);

    let dst = tempfile::tempdir().unwrap();
    let t = target(dst.path(), "proj", ItemKind::Folder, false).unwrap();
    assert_eq!(t.path, dst.path().join("proj"));
    let summary = unpacked(&bytes, &t).unwrap();

    let mut expected = manifest(&root);
    expected.remove("pipe");
    assert_eq!(manifest(&dst.path().join("proj")), expected);
    assert_eq!(summary.path, dst.path().join("proj").display().to_string());
    assert_eq!(summary.files, 6);
    assert_eq!(summary.symlinks, 3);
    assert_eq!(summary.folders, 5);
    assert_eq!(summary.skipped.len(), 1, "{:?}", summary.skipped);
    assert_eq!(summary.skipped[0].path, "proj/pipe");
    assert_eq!(summary.skipped[0].kind, SkipKind::Pipe);
    assert!(temp_leftovers(dst.path()).is_empty());
}

#[test]
fn a_file_lands_inside_an_existing_folder_or_under_a_new_name() {
    let src = tempfile::tempdir().unwrap();
    let file = src.path().join("report.pdf");
    fs::write(&file, b"%PDF\x00\x01binary").unwrap();
    let bytes = packed(&file, ItemKind::File);

    let dst = tempfile::tempdir().unwrap();
    let t = target(dst.path(), "report.pdf", ItemKind::File, false).unwrap();
    unpacked(&bytes, &t).unwrap();
    assert_eq!(
        fs::read(dst.path().join("report.pdf")).unwrap(),
        fs::read(&file).unwrap()
    );

    let renamed = dst.path().join("new/parents/copy.pdf");
    let t = target(&renamed, "report.pdf", ItemKind::File, false).unwrap();
    let summary = unpacked(&bytes, &t).unwrap();
    assert_eq!(summary.path, renamed.display().to_string());
    assert_eq!(fs::read(&renamed).unwrap(), fs::read(&file).unwrap());
}

#[test]
fn overwrite_replaces_files_merges_folders_and_keeps_the_rest() {
    let src = tempfile::tempdir().unwrap();
    let root = src.path().join("proj");
    fs::create_dir_all(root.join("sub")).unwrap();
    fs::write(root.join("a.txt"), "new a").unwrap();
    fs::write(root.join("sub/b.txt"), "new b").unwrap();
    let bytes = packed(&root, ItemKind::Folder);

    let dst = tempfile::tempdir().unwrap();
    let existing = dst.path().join("proj");
    fs::create_dir_all(existing.join("sub")).unwrap();
    fs::write(existing.join("a.txt"), "old a").unwrap();
    fs::write(existing.join("keep.txt"), "mine").unwrap();
    fs::write(existing.join("sub/other.txt"), "mine too").unwrap();

    let refused = target(dst.path(), "proj", ItemKind::Folder, false).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains(&format!("`{}` already exists", existing.display())),
        "{refused}"
    );
    let t = target(dst.path(), "proj", ItemKind::Folder, true).unwrap();
    unpacked(&bytes, &t).unwrap();
    assert_eq!(fs::read_to_string(existing.join("a.txt")).unwrap(), "new a");
    assert_eq!(
        fs::read_to_string(existing.join("sub/b.txt")).unwrap(),
        "new b"
    );
    assert_eq!(
        fs::read_to_string(existing.join("keep.txt")).unwrap(),
        "mine"
    );
    assert_eq!(
        fs::read_to_string(existing.join("sub/other.txt")).unwrap(),
        "mine too"
    );
}

#[test]
fn a_conflict_partway_stops_and_says_how_far_it_got() {
    let src = tempfile::tempdir().unwrap();
    let root = src.path().join("proj");
    fs::create_dir_all(&root).unwrap();
    for name in ["1.txt", "2.txt", "3.txt"] {
        fs::write(root.join(name), name).unwrap();
    }
    fs::write(root.join("clash"), "a file").unwrap();
    // Archive order is the folder's order: build it by hand so the clash
    // comes after the three files.
    let mut builder = tar::Builder::new(Vec::new());
    builder.append_dir("proj", &root).unwrap();
    for name in ["1.txt", "2.txt", "3.txt", "clash"] {
        builder
            .append_path_with_name(root.join(name), format!("proj/{name}"))
            .unwrap();
    }
    let bytes = builder.into_inner().unwrap();

    let dst = tempfile::tempdir().unwrap();
    fs::create_dir_all(dst.path().join("proj/clash")).unwrap();
    let t = target(dst.path(), "proj", ItemKind::Folder, true).unwrap();
    let e = unpacked(&bytes, &t).unwrap_err();
    let clash = dst.path().join("proj/clash");
    assert_eq!(
        e.to_string(),
        format!(
            "stopped at `{}`, which is a folder, and the copy has a file there: only a folder can merge into a folder; 3 files, 1 folder and 0 symlinks (15 bytes) were written before it and stay in place: move `{}` away, then copy again",
            clash.display(),
            clash.display()
        )
    );
    assert_eq!(
        fs::read_to_string(dst.path().join("proj/3.txt")).unwrap(),
        "3.txt"
    );
    assert!(clash.is_dir());
    assert!(temp_leftovers(dst.path()).is_empty());
}

/// One raw tar entry, with a name the tar crate's own checks would refuse.
fn raw_entry(out: &mut Vec<u8>, name: &str, kind: tar::EntryType, link: &str, data: &[u8]) {
    let mut header = tar::Header::new_gnu();
    {
        let gnu = header.as_gnu_mut().unwrap();
        gnu.name[..name.len()].copy_from_slice(name.as_bytes());
        gnu.linkname[..link.len()].copy_from_slice(link.as_bytes());
    }
    header.set_entry_type(kind);
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
}

#[test]
fn crafted_archives_write_nothing_outside_the_destination() {
    use tar::EntryType::{Directory, Link, Regular, Symlink};
    let base = tempfile::tempdir().unwrap();
    let outside = base.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret"), "keep me").unwrap();
    let dest = base.path().join("dest");
    fs::create_dir(&dest).unwrap();

    let mut bytes = Vec::new();
    raw_entry(&mut bytes, "proj/", Directory, "", b"");
    raw_entry(&mut bytes, "proj/ok.txt", Regular, "", b"fine");
    raw_entry(&mut bytes, "proj/../../outside/dotdot", Regular, "", b"x");
    raw_entry(&mut bytes, "/tmp/absolute-from-archive", Regular, "", b"x");
    raw_entry(&mut bytes, "other/x", Regular, "", b"x");
    // A link to outside, then a write through it.
    raw_entry(
        &mut bytes,
        "proj/esc",
        Symlink,
        outside.to_str().unwrap(),
        b"",
    );
    raw_entry(&mut bytes, "proj/esc/through", Regular, "", b"x");
    raw_entry(&mut bytes, "proj/esc/secret", Regular, "", b"overwritten");
    // Hard links out, directly and through the link.
    raw_entry(
        &mut bytes,
        "proj/hard-abs",
        Link,
        outside.join("secret").to_str().unwrap(),
        b"",
    );
    raw_entry(
        &mut bytes,
        "proj/hard-up",
        Link,
        "proj/../outside/secret",
        b"",
    );
    raw_entry(
        &mut bytes,
        "proj/hard-via-link",
        Link,
        "proj/esc/secret",
        b"",
    );
    // A hard link inside the copy is fine.
    raw_entry(&mut bytes, "proj/hard-ok", Link, "proj/ok.txt", b"");
    bytes.extend_from_slice(&[0; 1024]);

    let t = target(&dest, "proj", ItemKind::Folder, false).unwrap();
    let summary = unpacked(&bytes, &t).unwrap();

    assert_eq!(
        fs::read_to_string(outside.join("secret")).unwrap(),
        "keep me"
    );
    let names: Vec<_> = fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["secret"]);
    assert!(!Path::new("/tmp/absolute-from-archive").exists());
    assert!(!base.path().join("dotdot").exists());
    assert_eq!(
        fs::read_to_string(dest.join("proj/ok.txt")).unwrap(),
        "fine"
    );
    assert_eq!(
        fs::read_to_string(dest.join("proj/hard-ok")).unwrap(),
        "fine"
    );

    let refused: Vec<&str> = summary
        .skipped
        .iter()
        .filter(|s| s.kind == SkipKind::Refused)
        .map(|s| s.path.as_str())
        .collect();
    assert_eq!(
        refused,
        [
            "proj/../../outside/dotdot",
            "/tmp/absolute-from-archive",
            "other/x",
            "proj/esc/through",
            "proj/esc/secret",
            "proj/hard-abs",
            "proj/hard-up",
            "proj/hard-via-link",
        ],
        "{:#?}",
        summary.skipped
    );
    let through = summary
        .skipped
        .iter()
        .find(|s| s.path == "proj/esc/through")
        .unwrap();
    assert!(through.reason.contains("symlink"), "{}", through.reason);
}

#[test]
fn windows_rules_skip_and_list_what_windows_cannot_hold() {
    let src = tempfile::tempdir().unwrap();
    let root = src.path().join("proj");
    fs::create_dir_all(root.join("con")).unwrap();
    fs::write(root.join("con/inside.txt"), "covered by its folder").unwrap();
    fs::write(root.join("aux.txt"), "x").unwrap();
    fs::write(root.join("a:b"), "x").unwrap();
    fs::write(root.join("trailing."), "x").unwrap();
    fs::write(root.join("fine.txt"), "kept").unwrap();
    symlink("/usr/bin/env", root.join("abs")).unwrap();
    symlink("fine.txt", root.join("rel")).unwrap();
    let bytes = packed(&root, ItemKind::Folder);

    let dst = tempfile::tempdir().unwrap();
    let t = target(dst.path(), "proj", ItemKind::Folder, false).unwrap();
    let summary = unpack(
        &bytes[..],
        &t,
        UnpackOptions {
            windows_names: true,
        },
        &Progress::default(),
    )
    .unwrap();
    let mut skipped: Vec<(String, SkipKind)> = summary
        .skipped
        .iter()
        .map(|s| (s.path.clone(), s.kind))
        .collect();
    skipped.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        skipped,
        [
            ("proj/a:b".to_string(), SkipKind::WindowsName),
            ("proj/abs".to_string(), SkipKind::WindowsSymlink),
            ("proj/aux.txt".to_string(), SkipKind::WindowsName),
            ("proj/con".to_string(), SkipKind::WindowsName),
            ("proj/trailing.".to_string(), SkipKind::WindowsName),
        ]
    );
    let kept: Vec<_> = manifest(&dst.path().join("proj")).into_keys().collect();
    assert_eq!(kept, ["fine.txt", "rel"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_that_stops_early_fails_and_leaves_no_temporary_files() {
    use bytes::Bytes;
    let src = tempfile::tempdir().unwrap();
    let big = src.path().join("big.bin");
    fs::write(&big, vec![1u8; 4 * 1024 * 1024]).unwrap();
    let bytes = packed(&big, ItemKind::File);

    let dst = tempfile::tempdir().unwrap();
    let t = target(dst.path(), "big.bin", ItemKind::File, false).unwrap();
    let (feeder, reader) = computer_protocol::archive::feed_pipe();
    let job = tokio::task::spawn_blocking({
        let t = t.clone();
        move || unpack(reader, &t, UnpackOptions::default(), &Progress::default())
    });
    // Half the archive, then the sender goes away without saying it ended.
    feeder
        .send(Bytes::copy_from_slice(&bytes[..bytes.len() / 2]))
        .await
        .unwrap();
    drop(feeder);
    let e = job.await.unwrap().unwrap_err();
    assert!(matches!(e, ArchiveError::Stream { .. }), "{e}");
    assert!(
        e.to_string().contains("temporary files were removed"),
        "{e}"
    );
    assert!(temp_leftovers(dst.path()).is_empty());
    assert!(!dst.path().join("big.bin").exists());
}
