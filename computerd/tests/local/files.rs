//! `computerd::files` against real files in temp folders.

use base64::Engine as _;
use computer_protocol::{
    Coded, ErrorCode, FileType, ReadFileRequest, ReadFileResponse, WriteFileRequest,
};
use computerd::files::{self, FilesError};
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A home folder and a working folder inside it, as a session has.
struct Fixture {
    _root: TempDir,
    home: PathBuf,
    cwd: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let cwd = home.join("work");
        std::fs::create_dir_all(&cwd).unwrap();
        Fixture {
            _root: root,
            home,
            cwd,
        }
    }

    fn read(
        &self,
        path: &str,
        offset: Option<u64>,
        limit: Option<u64>,
    ) -> Result<ReadFileResponse, FilesError> {
        files::read(
            &self.home,
            &self.cwd,
            &ReadFileRequest {
                path: path.to_string(),
                offset,
                limit,
            },
        )
    }

    /// Reads text, failing the test on anything else.
    fn read_text(
        &self,
        path: &str,
        offset: Option<u64>,
        limit: Option<u64>,
    ) -> (String, u64, Option<String>) {
        match self.read(path, offset, limit) {
            Ok(ReadFileResponse::Text {
                text,
                total_lines,
                note,
                ..
            }) => (text, total_lines, note),
            other => panic!("reading `{path}` gave {other:?}, expected text"),
        }
    }

    fn write(
        &self,
        path: &str,
        content: &str,
    ) -> Result<computer_protocol::WriteFileResponse, FilesError> {
        files::write(
            &self.home,
            &self.cwd,
            &WriteFileRequest {
                path: path.to_string(),
                content: content.to_string(),
            },
        )
    }
}

fn show(path: &Path) -> String {
    path.display().to_string()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

// ---- set_cwd ----

#[test]
fn set_cwd_resolves_relative_home_and_absolute_paths() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.cwd.join("sub/deeper")).unwrap();
    let home = fx.home.canonicalize().unwrap();
    let at = |path: &str| files::set_cwd(&fx.home, &fx.cwd, path).unwrap();
    assert_eq!(at("sub/deeper"), home.join("work/sub/deeper"));
    assert_eq!(at("sub/../sub/./deeper/.."), home.join("work/sub"));
    assert_eq!(at("~"), home);
    assert_eq!(at("~/work/sub"), home.join("work/sub"));
    assert_eq!(at(".."), home);
    assert_eq!(at(&show(&fx.cwd.join("sub"))), home.join("work/sub"));
}

#[test]
fn set_cwd_resolves_symlinks() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.home.join("real")).unwrap();
    symlink(fx.home.join("real"), fx.cwd.join("link")).unwrap();
    let cwd = files::set_cwd(&fx.home, &fx.cwd, "link").unwrap();
    assert_eq!(cwd, fx.home.join("real").canonicalize().unwrap());
}

#[test]
fn set_cwd_refuses_a_missing_folder_or_a_file() {
    let fx = Fixture::new();
    let missing = files::set_cwd(&fx.home, &fx.cwd, "x/y").unwrap_err();
    assert_eq!(missing.code(), ErrorCode::NotFound);
    assert!(
        missing
            .to_string()
            .starts_with(&format!("`{}` does not exist", show(&fx.cwd.join("x/y")))),
        "{missing}"
    );
    std::fs::write(fx.cwd.join("f.txt"), "x").unwrap();
    let file = files::set_cwd(&fx.home, &fx.cwd, "f.txt").unwrap_err();
    assert_eq!(file.code(), ErrorCode::Conflict);
    assert!(file.to_string().contains("is not a folder"), "{file}");
}

// ---- list ----

#[test]
fn list_puts_folders_first_then_names_in_order() {
    let fx = Fixture::new();
    for dir in ["zeta", "alpha"] {
        std::fs::create_dir(fx.cwd.join(dir)).unwrap();
    }
    std::fs::write(fx.cwd.join("b.txt"), "12345").unwrap();
    std::fs::write(fx.cwd.join("a.txt"), "").unwrap();
    symlink(fx.cwd.join("alpha"), fx.cwd.join("link-to-dir")).unwrap();
    let listing = files::list(&fx.home, &fx.cwd, None).unwrap();
    assert_eq!(listing.path, show(&fx.cwd));
    assert_eq!(listing.more, 0);
    let got: Vec<(&str, FileType)> = listing
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e.file_type))
        .collect();
    assert_eq!(
        got,
        [
            ("alpha", FileType::Dir),
            ("zeta", FileType::Dir),
            ("a.txt", FileType::File),
            ("b.txt", FileType::File),
            ("link-to-dir", FileType::Symlink),
        ]
    );
    let b = &listing.entries[3];
    assert_eq!(b.size, 5);
    let modified =
        time::OffsetDateTime::parse(&b.modified, &time::format_description::well_known::Rfc3339)
            .unwrap_or_else(|err| panic!("`{}` is not RFC 3339: {err}", b.modified));
    assert!(b.modified.ends_with('Z'), "{}", b.modified);
    let age = time::OffsetDateTime::now_utc() - modified;
    assert!(
        age.whole_seconds().abs() < 60,
        "modified {} is not now",
        b.modified
    );
}

#[test]
fn list_caps_at_1000_entries_and_counts_the_rest() {
    let fx = Fixture::new();
    let folder = fx.cwd.join("many");
    std::fs::create_dir(&folder).unwrap();
    for n in 0..1003 {
        std::fs::write(folder.join(format!("f{n:04}")), "").unwrap();
    }
    for dir in ["d1", "d2"] {
        std::fs::create_dir(folder.join(dir)).unwrap();
    }
    let listing = files::list(&fx.home, &fx.cwd, Some("many")).unwrap();
    assert_eq!(listing.entries.len(), 1000);
    assert_eq!(listing.more, 5);
    assert_eq!(listing.entries[0].name, "d1");
    assert_eq!(listing.entries[1].name, "d2");
    assert_eq!(listing.entries[2].name, "f0000");
    assert_eq!(listing.entries[999].name, "f0997");
}

#[test]
fn list_takes_home_and_absolute_paths() {
    let fx = Fixture::new();
    std::fs::write(fx.home.join("in-home"), "").unwrap();
    let listing = files::list(&fx.home, &fx.cwd, Some("~")).unwrap();
    assert_eq!(listing.path, show(&fx.home));
    assert!(listing.entries.iter().any(|e| e.name == "in-home"));
    let absolute = files::list(&fx.home, &fx.cwd, Some(&show(&fx.home))).unwrap();
    assert_eq!(absolute, listing);
}

#[test]
fn list_refuses_a_missing_path_or_a_file() {
    let fx = Fixture::new();
    let missing = files::list(&fx.home, &fx.cwd, Some("nope")).unwrap_err();
    assert_eq!(missing.code(), ErrorCode::NotFound);
    assert!(missing
        .to_string()
        .contains(&format!("`{}`", show(&fx.cwd.join("nope")))));
    std::fs::write(fx.cwd.join("f.txt"), "x").unwrap();
    let file = files::list(&fx.home, &fx.cwd, Some("f.txt")).unwrap_err();
    assert_eq!(file.code(), ErrorCode::Conflict);
    assert!(file.to_string().contains("use `read_file`"), "{file}");
}

// ---- read ----

#[test]
fn read_returns_utf8_text_with_its_line_count() {
    let fx = Fixture::new();
    std::fs::write(fx.cwd.join("t.txt"), "héllo\nwörld 😀\nno newline").unwrap();
    let (text, lines, note) = fx.read_text("t.txt", None, None);
    assert_eq!(text, "héllo\nwörld 😀\nno newline");
    assert_eq!(lines, 3);
    assert_eq!(note, None);
}

#[test]
fn read_returns_png_and_jpeg_by_magic_bytes_not_name() {
    let fx = Fixture::new();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR rest of a png".to_vec();
    let jpeg = b"\xFF\xD8\xFF\xE0\0\x10JFIF\0 rest of a jpeg".to_vec();
    std::fs::write(fx.cwd.join("picture.bin"), &png).unwrap();
    std::fs::write(fx.cwd.join("photo.txt"), &jpeg).unwrap();
    for (name, bytes, expected_mime) in [
        ("picture.bin", &png, "image/png"),
        ("photo.txt", &jpeg, "image/jpeg"),
    ] {
        match fx.read(name, None, None).unwrap() {
            ReadFileResponse::Image {
                path,
                mime,
                data_base64,
            } => {
                assert_eq!(path, show(&fx.cwd.join(name)));
                assert_eq!(mime, expected_mime);
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(data_base64)
                    .unwrap();
                assert_eq!(&decoded, bytes);
            }
            other => panic!("`{name}` read as {other:?}"),
        }
    }
}

#[test]
fn read_refuses_an_image_over_1_mb() {
    let fx = Fixture::new();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.resize(1024 * 1024 + 1, 7);
    std::fs::write(fx.cwd.join("big.png"), &png).unwrap();
    let err = fx.read("big.png", None, None).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict);
    let message = err.to_string();
    assert!(
        message.contains("is a PNG image of 1048577 bytes"),
        "{message}"
    );
    assert!(
        message.contains("`file_transfer`") && message.contains("`shell`"),
        "{message}"
    );

    // Exactly 1 MB is still an image.
    png.truncate(1024 * 1024);
    std::fs::write(fx.cwd.join("big.png"), &png).unwrap();
    assert!(matches!(
        fx.read("big.png", None, None),
        Ok(ReadFileResponse::Image { .. })
    ));
}

#[test]
fn read_refuses_other_binary_files_with_a_hint() {
    let fx = Fixture::new();
    std::fs::write(fx.cwd.join("nul.dat"), b"text\0more text").unwrap();
    std::fs::write(fx.cwd.join("latin1.txt"), b"caf\xE9\n").unwrap();
    for name in ["nul.dat", "latin1.txt"] {
        let err = fx.read(name, None, None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Conflict, "{name}");
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("`{}` is a binary file", show(&fx.cwd.join(name)))),
            "{message}"
        );
        assert!(
            message.contains("`shell`") && message.contains("`file_transfer`"),
            "{message}"
        );
    }
}

#[test]
fn read_shortens_long_text_and_says_how_to_read_a_range() {
    let fx = Fixture::new();
    // 10000 lines of 10 bytes: 100000 bytes.
    let text: String = (1..=10_000).map(|n| format!("{n:09}\n")).collect();
    std::fs::write(fx.cwd.join("long.txt"), &text).unwrap();
    let (shown, lines, note) = fx.read_text("long.txt", None, None);
    assert_eq!(lines, 10_000);
    let expected = format!(
        "{}\n[... 70000 bytes omitted ...]\n{}",
        &text[..15_000],
        &text[85_000..]
    );
    assert_eq!(shown, expected);
    let note = note.expect("a shortened text has a note");
    assert!(note.contains("cut from lines 1501 to 8500"), "{note}");
    assert!(note.contains("`offset` 1501 and `limit` 7000"), "{note}");

    // Following the note shows the cut lines (shortened again, being long).
    let (range, _, range_note) = fx.read_text("long.txt", Some(1501), Some(7000));
    assert!(range.starts_with("000001501\n"));
    assert!(range.ends_with("000008500\n"));
    assert!(range_note
        .unwrap()
        .starts_with("showing lines 1501 to 8500 of 10000"));
}

#[test]
fn read_offset_and_limit_select_lines() {
    let fx = Fixture::new();
    let text: String = (1..=10).map(|n| format!("line {n}\n")).collect();
    std::fs::write(fx.cwd.join("ten.txt"), text).unwrap();
    let (shown, lines, note) = fx.read_text("ten.txt", Some(3), Some(2));
    assert_eq!(shown, "line 3\nline 4\n");
    assert_eq!(lines, 10);
    assert_eq!(
        note.as_deref(),
        Some("showing lines 3 to 4 of 10; read on with `offset` 5")
    );

    let (shown, _, note) = fx.read_text("ten.txt", Some(9), None);
    assert_eq!(shown, "line 9\nline 10\n");
    assert_eq!(
        note.as_deref(),
        Some("showing lines 9 to 10 of 10 (the end of the file)")
    );

    let (shown, _, _) = fx.read_text("ten.txt", None, Some(1));
    assert_eq!(shown, "line 1\n");
}

#[test]
fn read_refuses_offset_zero_or_past_the_end() {
    let fx = Fixture::new();
    std::fs::write(fx.cwd.join("three.txt"), "a\nb\nc\n").unwrap();
    let zero = fx.read("three.txt", Some(0), None).unwrap_err();
    assert_eq!(zero.code(), ErrorCode::InvalidInput);
    assert!(
        zero.to_string().starts_with("`offset` must be at least 1"),
        "{zero}"
    );
    let past = fx.read("three.txt", Some(4), None).unwrap_err();
    assert_eq!(past.code(), ErrorCode::InvalidInput);
    assert_eq!(
        past.to_string(),
        format!(
            "`offset` 4 is past the end of `{}`, which has 3 lines: give an `offset` from 1 to 3",
            show(&fx.cwd.join("three.txt"))
        )
    );
    let limit = fx.read("three.txt", None, Some(0)).unwrap_err();
    assert_eq!(limit.code(), ErrorCode::InvalidInput);
    assert!(
        limit.to_string().starts_with("`limit` must be at least 1"),
        "{limit}"
    );
}

#[test]
fn read_an_empty_file() {
    let fx = Fixture::new();
    std::fs::write(fx.cwd.join("empty"), "").unwrap();
    assert_eq!(fx.read_text("empty", None, None), (String::new(), 0, None));
    assert_eq!(
        fx.read("empty", Some(1), None).unwrap_err().code(),
        ErrorCode::InvalidInput
    );
}

#[test]
fn read_a_folder_or_missing_file_says_what_to_do() {
    let fx = Fixture::new();
    let folder = fx.read("~", None, None).unwrap_err();
    assert_eq!(folder.code(), ErrorCode::Conflict);
    assert!(folder.to_string().contains("use `list_files`"), "{folder}");
    let missing = fx.read("missing.txt", None, None).unwrap_err();
    assert_eq!(missing.code(), ErrorCode::NotFound);
    assert!(missing.to_string().starts_with(&format!(
        "`{}` does not exist",
        show(&fx.cwd.join("missing.txt"))
    )));
}

#[test]
fn read_follows_a_symlink_to_a_file() {
    let fx = Fixture::new();
    std::fs::write(fx.home.join("target.txt"), "through the link\n").unwrap();
    symlink(fx.home.join("target.txt"), fx.cwd.join("link.txt")).unwrap();
    assert_eq!(fx.read_text("link.txt", None, None).0, "through the link\n");
}

// ---- write ----

#[test]
fn write_creates_missing_folders_and_returns_the_absolute_path() {
    let fx = Fixture::new();
    let written = fx.write("new/deeper/file.txt", "hello ✓\n").unwrap();
    let expected = fx.cwd.join("new/deeper/file.txt");
    assert_eq!(written.path, show(&expected));
    assert_eq!(written.bytes, "hello ✓\n".len() as u64);
    assert_eq!(std::fs::read_to_string(&expected).unwrap(), "hello ✓\n");
    // New files get the umask's default: readable and writable by the owner, not executable.
    let mode = mode(&expected);
    assert_eq!(mode & 0o600, 0o600, "{mode:o}");
    assert_eq!(mode & 0o111, 0, "{mode:o}");
}

#[test]
fn write_replaces_a_file_and_keeps_its_mode() {
    let fx = Fixture::new();
    let script = fx.cwd.join("run.sh");
    std::fs::write(&script, "old content that is longer than the new\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    fx.write("run.sh", "#!/bin/sh\necho new\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(&script).unwrap(),
        "#!/bin/sh\necho new\n"
    );
    assert_eq!(mode(&script), 0o755);
    // No temp file is left beside it.
    let names: Vec<String> = std::fs::read_dir(&fx.cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["run.sh"]);
}

#[test]
fn write_is_atomic_a_reader_holding_the_old_file_keeps_it() {
    // Renaming over the file gives it a new inode: an open handle still reads
    // the old content in full, never a half-written mix.
    let fx = Fixture::new();
    let path = fx.cwd.join("data.txt");
    std::fs::write(&path, "old").unwrap();
    let old_inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&path).unwrap());
    let held = std::fs::File::open(&path).unwrap();
    fx.write("data.txt", "new").unwrap();
    let new_inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&path).unwrap());
    assert_ne!(old_inode, new_inode);
    assert_eq!(std::io::read_to_string(held).unwrap(), "old");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
}

#[test]
fn write_refuses_a_folder() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.cwd.join("dir")).unwrap();
    let err = fx.write("dir", "x").unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict);
    assert!(
        err.to_string()
            .starts_with(&format!("`{}` is a folder", show(&fx.cwd.join("dir")))),
        "{err}"
    );
    let slash = fx.write("notyet/", "x").unwrap_err();
    assert_eq!(slash.code(), ErrorCode::InvalidInput);
    assert!(!fx.cwd.join("notyet").exists());
}

#[test]
fn write_refuses_a_path_through_a_file() {
    let fx = Fixture::new();
    std::fs::write(fx.cwd.join("plain"), "x").unwrap();
    let err = fx.write("plain/sub/file.txt", "x").unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict);
    assert!(
        err.to_string()
            .starts_with(&format!("`{}` is a file", show(&fx.cwd.join("plain")))),
        "{err}"
    );
}

#[test]
fn write_refuses_content_over_10_mb() {
    let fx = Fixture::new();
    let limit = 10 * 1024 * 1024;
    let err = fx.write("big.txt", &"x".repeat(limit + 1)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    let message = err.to_string();
    assert!(
        message.starts_with("`content` is 10485761 bytes, over the 10485760-byte (10 MB) limit"),
        "{message}"
    );
    assert!(!fx.cwd.join("big.txt").exists());
    // Exactly 10 MB is fine.
    assert_eq!(
        fx.write("big.txt", &"x".repeat(limit)).unwrap().bytes,
        limit as u64
    );
}

#[test]
fn write_through_a_symlink_updates_its_target() {
    let fx = Fixture::new();
    let target = fx.home.join("dotfiles/config");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::write(&target, "old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    symlink("../dotfiles/config", fx.cwd.join("config")).unwrap();
    let written = fx.write("config", "new").unwrap();
    assert_eq!(written.path, show(&target.canonicalize().unwrap()));
    assert!(std::fs::symlink_metadata(fx.cwd.join("config"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    assert_eq!(mode(&target), 0o600);

    // A dangling link creates the file it names.
    symlink(fx.home.join("later/made.txt"), fx.cwd.join("dangling")).unwrap();
    fx.write("dangling", "made").unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.home.join("later/made.txt")).unwrap(),
        "made"
    );
}

#[test]
fn tilde_paths_are_in_home() {
    let fx = Fixture::new();
    let written = fx.write("~/notes/todo.md", "- test\n").unwrap();
    assert_eq!(written.path, show(&fx.home.join("notes/todo.md")));
    assert_eq!(fx.read_text("~/notes/todo.md", None, None).0, "- test\n");
    let listing = files::list(&fx.home, &fx.cwd, Some("~/notes")).unwrap();
    assert_eq!(listing.entries[0].name, "todo.md");
}

#[test]
fn a_pipe_is_listed_as_other_and_never_opened() {
    let fx = Fixture::new();
    let fifo = fx.cwd.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {} failed", fifo.display());
    let listing = files::list(&fx.home, &fx.cwd, None).unwrap();
    assert_eq!(listing.entries[0].file_type, FileType::Other);
    // Opening a pipe with no writer would block; both calls refuse at once.
    let read = fx.read("fifo", None, None).unwrap_err();
    assert_eq!(read.code(), ErrorCode::Conflict);
    assert!(read.to_string().contains("is not a regular file"), "{read}");
    let write = fx.write("fifo", "x").unwrap_err();
    assert_eq!(write.code(), ErrorCode::Conflict);
}
