//! The archive engine on real files: what one side packs the other unpacks
//! the same, the destination and overwrite rules hold entry by entry, and
//! crafted archives write nothing outside their destination.
//!
//! Needs the `archive` feature, which the workspace turns on (computerd and
//! the host use it): `cargo test -p computer-protocol --all-features`.
#![cfg(feature = "archive")]

use computer_protocol::archive::{unpack, ArchiveError, Progress, UnpackOptions};
use computer_protocol::transfer::SkipKind;
use computer_protocol::ItemKind;
use std::fs;
use std::path::Path;
use tarball::{packed, raw_entry, target, unpacked};
use test_support::{tarball, tree};
use tree::{build, manifest, temp_files};

/// A tree with what a transfer must keep: modes, an empty folder, nested
/// folders, relative, absolute and dangling symlinks, a long name, a name
/// that is not UTF-8, and a pipe that must be skipped and listed.
fn sample_tree(root: &Path) {
    use tree::Item::{Dir, Fifo, File, Link, Mode};
    let long = format!("src/{}", "n".repeat(150));
    build(
        root,
        &[
            Dir("src/deep/er"),
            Dir("empty"),
            File("run.sh", b"#!/bin/sh\necho hi\n"),
            Mode("run.sh", 0o755),
            File("secret", b"s"),
            Mode("secret", 0o600),
            File("src/deep/er/main.rs", b"fn main() {}\n"),
            File("src/empty.txt", b""),
            Mode("src/deep", 0o750),
            Link("src/link", "deep/er/main.rs"),
            Link("abs-link", "/etc/hostname"),
            Link("dangling", "nowhere"),
            File(&long, b"long name"),
            Fifo("pipe"),
        ],
    );
    use std::os::unix::ffi::OsStrExt;
    fs::write(
        root.join(std::ffi::OsStr::from_bytes(b"caf\xe9")),
        "latin-1",
    )
    .unwrap();
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
    assert!(temp_files(dst.path()).is_empty());
}

/// The packer writes a file's contents past tar's own copy, with the
/// padding by hand: sizes at and around a tar block and a pipe chunk round
/// trip byte for byte, and the tar crate reads the archive as well.
#[test]
fn files_of_every_size_around_blocks_and_chunks_round_trip() {
    use tree::Item::File;
    let chunk = computer_protocol::archive::pipe::CHUNK_BYTES;
    let sizes = [
        0,
        1,
        511,
        512,
        513,
        1024,
        chunk - 1,
        chunk,
        chunk + 1,
        3 * chunk + 7,
    ];
    let contents: Vec<(String, Vec<u8>)> = sizes
        .iter()
        .map(|&n| {
            let bytes = (0..n).map(|i| (i * 7 + n) as u8).collect();
            (format!("f{n}"), bytes)
        })
        .collect();
    let src = tempfile::tempdir().unwrap();
    let root = src.path().join("sizes");
    let items: Vec<tree::Item> = contents
        .iter()
        .map(|(name, bytes)| File(name, bytes.as_slice()))
        .collect();
    build(&root, &items);
    let bytes = packed(&root, ItemKind::Folder);

    let mut read_back = 0;
    for entry in tar::Archive::new(&bytes[..]).entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().into_owned();
        if let Some((_, expected)) = contents.iter().find(|(name, _)| path.ends_with(name)) {
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut data).unwrap();
            assert_eq!(&data, expected, "{}", path.display());
            read_back += 1;
        }
    }
    assert_eq!(read_back, sizes.len());

    let dst = tempfile::tempdir().unwrap();
    let t = target(dst.path(), "sizes", ItemKind::Folder, false).unwrap();
    let summary = unpacked(&bytes, &t).unwrap();
    assert_eq!(summary.files, sizes.len() as u64);
    assert_eq!(manifest(&dst.path().join("sizes")), manifest(&root));
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
    use tree::Item::{Dir, File};
    let src = tempfile::tempdir().unwrap();
    let root = src.path().join("proj");
    build(
        &root,
        &[
            Dir("sub"),
            File("a.txt", b"new a"),
            File("sub/b.txt", b"new b"),
        ],
    );
    let bytes = packed(&root, ItemKind::Folder);

    let dst = tempfile::tempdir().unwrap();
    let existing = dst.path().join("proj");
    build(
        &existing,
        &[
            Dir("sub"),
            File("a.txt", b"old a"),
            File("keep.txt", b"mine"),
            File("sub/other.txt", b"mine too"),
        ],
    );

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
    assert!(temp_files(dst.path()).is_empty());
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
fn beneath_a_root_only_links_that_surely_stay_inside_are_made() {
    use tree::Item::{Dir, File, Link};
    let src = tempfile::tempdir().unwrap();
    let root = src.path().join("proj");
    build(
        &root,
        &[
            Dir("lib"),
            File("lib/x.js", b"x"),
            Dir("bin"),
            Link("bin/x", "../lib/x.js"),
            Link("abs", "/home/someone/.ssh"),
            Link("up", "../elsewhere"),
            Link("dot", "."),
            Link("via", "dot/../../elsewhere"),
        ],
    );
    let bytes = packed(&root, ItemKind::Folder);
    let dst = tempfile::tempdir().unwrap();
    let t = target(dst.path(), "proj", ItemKind::Folder, false).unwrap();
    let confined = UnpackOptions {
        confined: true,
        ..UnpackOptions::default()
    };
    let summary = unpack(&bytes[..], &t, confined, &Progress::default()).unwrap();
    let mut skipped: Vec<(String, SkipKind)> = summary
        .skipped
        .iter()
        .map(|s| (s.path.clone(), s.kind))
        .collect();
    skipped.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        skipped,
        [
            ("proj/abs".to_string(), SkipKind::Refused),
            ("proj/up".to_string(), SkipKind::Refused),
            ("proj/via".to_string(), SkipKind::Refused),
        ]
    );
    assert!(summary.skipped[0].reason.contains("transfer root"));
    let kept: Vec<_> = manifest(&dst.path().join("proj")).into_keys().collect();
    assert_eq!(kept, ["bin", "bin/x", "dot", "lib", "lib/x.js"]);
}

#[test]
fn windows_rules_skip_and_list_what_windows_cannot_hold() {
    use tree::Item::{Dir, File, Link};
    let src = tempfile::tempdir().unwrap();
    let root = src.path().join("proj");
    build(
        &root,
        &[
            Dir("con"),
            File("con/inside.txt", b"covered by its folder"),
            File("aux.txt", b"x"),
            File("a:b", b"x"),
            File("trailing.", b"x"),
            File("fine.txt", b"kept"),
            Link("abs", "/usr/bin/env"),
            Link("rel", "fine.txt"),
        ],
    );
    let bytes = packed(&root, ItemKind::Folder);

    let dst = tempfile::tempdir().unwrap();
    let t = target(dst.path(), "proj", ItemKind::Folder, false).unwrap();
    let summary = unpack(
        &bytes[..],
        &t,
        UnpackOptions {
            windows_names: true,
            ..UnpackOptions::default()
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
    let job = tokio::task::spawn_blocking(move || {
        unpack(reader, &t, UnpackOptions::default(), &Progress::default())
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
    assert!(temp_files(dst.path()).is_empty());
    assert!(!dst.path().join("big.bin").exists());
}

/// An archive of `entries` (name, kind, mode, data) made with the tar
/// crate's own writer, then `trailers` skipped lists.
fn archive_of(
    entries: &[(&str, tar::EntryType, u32, &[u8])],
    trailers: &[computer_protocol::archive::trailer::SkippedTrailer],
    mtime: u64,
) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, kind, mode, data) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(*kind);
        header.set_size(data.len() as u64);
        header.set_mode(*mode);
        header.set_mtime(mtime);
        builder.append_data(&mut header, name, *data).unwrap();
    }
    for trailer in trailers {
        computer_protocol::archive::trailer::write_trailer(&mut builder, trailer).unwrap();
    }
    builder.into_inner().unwrap()
}

#[test]
fn a_time_no_clock_holds_is_left_out_without_a_panic() {
    // The tar crate writes u64::MAX in the GNU base-256 form.
    let bytes = archive_of(
        &[("f.txt", tar::EntryType::Regular, 0o644, b"x")],
        &[],
        u64::MAX,
    );
    let dst = tempfile::tempdir().unwrap();
    let t = target(dst.path(), "f.txt", ItemKind::File, false).unwrap();
    let summary = unpacked(&bytes, &t).unwrap();
    assert_eq!(summary.files, 1);
    assert_eq!(fs::read(dst.path().join("f.txt")).unwrap(), b"x");
}

#[cfg(unix)]
#[test]
fn modes_follow_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let bytes = archive_of(
        &[
            ("proj", tar::EntryType::Directory, 0o777, b""),
            (
                "proj/run.sh",
                tar::EntryType::Regular,
                0o777,
                b"#!/bin/sh\n",
            ),
            ("proj/notes", tar::EntryType::Regular, 0o666, b"n"),
            ("proj/sticky", tar::EntryType::Directory, 0o1777, b""),
        ],
        &[],
        0,
    );
    let dst = tempfile::tempdir().unwrap();
    let t = target(dst.path(), "proj", ItemKind::Folder, false).unwrap();
    let options = UnpackOptions {
        umask: 0o022,
        ..UnpackOptions::default()
    };
    unpack(&bytes[..], &t, options, &Progress::default()).unwrap();
    let mode = |p: &str| {
        fs::metadata(dst.path().join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!(mode("proj"), 0o755);
    assert_eq!(mode("proj/run.sh"), 0o755);
    assert_eq!(mode("proj/notes"), 0o644);
    assert_eq!(mode("proj/sticky"), 0o1755);
}

fn trailer(reason_bytes: usize, more: u64) -> computer_protocol::archive::trailer::SkippedTrailer {
    computer_protocol::archive::trailer::SkippedTrailer {
        entries: vec![computer_protocol::Skipped {
            path: "proj/p".into(),
            kind: SkipKind::Pipe,
            reason: "a".repeat(reason_bytes),
        }],
        more,
    }
}

#[test]
fn the_senders_skipped_list_is_cut_to_size() {
    let bytes = archive_of(
        &[("proj", tar::EntryType::Directory, 0o755, b"")],
        &[trailer(2 * 1024 * 1024, u64::MAX)],
        0,
    );
    let dst = tempfile::tempdir().unwrap();
    let t = target(dst.path(), "proj", ItemKind::Folder, false).unwrap();
    let summary = unpacked(&bytes, &t).unwrap();
    assert_eq!(summary.skipped.len(), 1);
    assert!(
        summary.skipped[0].reason.len() <= 1024,
        "{}",
        summary.skipped[0].reason.len()
    );
    assert_eq!(summary.skipped_total(), u64::MAX);
}

#[test]
fn a_second_skipped_list_is_refused() {
    let bytes = archive_of(
        &[("proj", tar::EntryType::Directory, 0o755, b"")],
        &[trailer(10, 0), trailer(10, 0)],
        0,
    );
    let dst = tempfile::tempdir().unwrap();
    let t = target(dst.path(), "proj", ItemKind::Folder, false).unwrap();
    let e = unpacked(&bytes, &t).unwrap_err();
    assert!(matches!(e, ArchiveError::BadArchive { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("more than one list of skipped entries"),
        "{e}"
    );
}

#[test]
fn a_symlink_never_replaces_a_file_already_there() {
    use tar::EntryType::{Directory, Regular, Symlink};
    let base = tempfile::tempdir().unwrap();
    let bashrc = base.path().join("bashrc");
    fs::write(&bashrc, "keep me").unwrap();
    let existing = base.path().join("dest/proj");
    fs::create_dir_all(&existing).unwrap();
    fs::write(existing.join("notes.txt"), "my notes").unwrap();
    std::os::unix::fs::symlink("notes.txt", existing.join("old-link")).unwrap();

    let mut bytes = Vec::new();
    raw_entry(&mut bytes, "proj/", Directory, "", b"");
    raw_entry(
        &mut bytes,
        "proj/notes.txt",
        Symlink,
        bashrc.to_str().unwrap(),
        b"",
    );
    // A link may still replace a link, and a file a file.
    raw_entry(&mut bytes, "proj/old-link", Symlink, "new-target", b"");
    raw_entry(&mut bytes, "proj/other.txt", Regular, "", b"new");
    bytes.extend_from_slice(&[0; 1024]);

    let t = target(&base.path().join("dest"), "proj", ItemKind::Folder, true).unwrap();
    let summary = unpacked(&bytes, &t).unwrap();

    let notes = existing.join("notes.txt");
    assert!(!fs::symlink_metadata(&notes).unwrap().is_symlink());
    assert_eq!(fs::read_to_string(&notes).unwrap(), "my notes");
    assert_eq!(
        fs::read_link(existing.join("old-link")).unwrap(),
        Path::new("new-target")
    );
    assert_eq!(summary.symlinks, 1);
    assert_eq!(summary.skipped.len(), 1, "{:#?}", summary.skipped);
    let skipped = &summary.skipped[0];
    assert_eq!(skipped.path, "proj/notes.txt");
    assert_eq!(skipped.kind, SkipKind::Refused);
    assert!(
        skipped.reason.contains("a symlink never replaces a file"),
        "{}",
        skipped.reason
    );
}

#[test]
fn git_hooks_config_and_symlinks_out_are_listed_to_look_at() {
    use computer_protocol::CautionKind;
    use tree::Item::{Dir, File, Link};
    let src = tempfile::tempdir().unwrap();
    let root = src.path().join("proj");
    build(
        &root,
        &[
            Dir(".git/hooks"),
            Dir("src/deep"),
            Dir("vendor/lib"),
            File(
                ".git/config",
                b"[core]\n\tfsmonitor = touch /tmp/cu-pwned\n",
            ),
            File(".git/HEAD", b"ref: refs/heads/main\n"),
            File(".git/hooks/pre-commit", b"#!/bin/sh\n"),
            File("vendor/lib/.git", b"gitdir: ../../elsewhere\n"),
            File("src/main.rs", b"fn main() {}\n"),
            Link("src/deep/in", "../main.rs"),
            Link("src/up", "../../outside"),
            Link("abs", "/home/me/.bashrc"),
        ],
    );
    let bytes = packed(&root, ItemKind::Folder);

    let dst = tempfile::tempdir().unwrap();
    let t = target(dst.path(), "proj", ItemKind::Folder, false).unwrap();
    let summary = unpacked(&bytes, &t).unwrap();

    // Written all the same: copying a repository back is the point.
    assert_eq!(manifest(&dst.path().join("proj")), manifest(&root));
    let copy = dst.path().join("proj");
    let mut cautions: Vec<_> = summary
        .cautions
        .iter()
        .map(|c| (c.path.clone(), c.kind, c.target.clone()))
        .collect();
    cautions.sort_by(|a, b| a.0.cmp(&b.0));
    let at = |rel: &str| copy.join(rel).display().to_string();
    assert_eq!(
        cautions,
        [
            (at(".git/config"), CautionKind::GitConfig, None),
            (at(".git/hooks/pre-commit"), CautionKind::GitHook, None),
            (
                at("abs"),
                CautionKind::SymlinkOutside,
                Some("/home/me/.bashrc".into())
            ),
            (
                at("src/up"),
                CautionKind::SymlinkOutside,
                Some("../../outside".into())
            ),
            (at("vendor/lib/.git"), CautionKind::GitLink, None),
        ]
    );
    assert_eq!(summary.cautions_more, 0);
}

#[test]
fn many_entries_to_look_at_are_capped_and_counted() {
    use computer_protocol::transfer::CAUTIONS_LISTED_MAX;
    use tree::Item::{Dir, File};
    let src = tempfile::tempdir().unwrap();
    let root = src.path().join("proj");
    let names: Vec<String> = (0..CAUTIONS_LISTED_MAX + 5)
        .map(|i| format!(".git/hooks/hook-{i}"))
        .collect();
    let mut items = vec![Dir(".git/hooks")];
    items.extend(names.iter().map(|n| File(n, b"#!/bin/sh\n")));
    build(&root, &items);
    let bytes = packed(&root, ItemKind::Folder);

    let dst = tempfile::tempdir().unwrap();
    let t = target(dst.path(), "proj", ItemKind::Folder, false).unwrap();
    let summary = unpacked(&bytes, &t).unwrap();
    assert_eq!(summary.cautions.len(), CAUTIONS_LISTED_MAX);
    assert_eq!(summary.cautions_more, 5);
}
