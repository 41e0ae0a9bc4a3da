//! Trees of files for the `file_transfer` tests: making them, describing
//! them (kind, mode, checksum or link target) so a copy can be compared with
//! its source, and finding the temporary files a transfer left behind.
//!
//! The suites that copy trees (`protocol/tests/local/archive.rs`,
//! `computerd/tests/daemon/transfer.rs`, `host/tests/engine/mcp_transfer.rs`) build and
//! compare them with this one module, so all three agree on what a faithful
//! copy is.

use computer_protocol::archive::TEMP_PREFIX;
use std::collections::BTreeMap;
use std::fs;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

/// One step in making a tree, by path relative to its root, in order.
pub enum Item<'a> {
    /// A folder, with any missing parents.
    Dir(&'a str),
    /// A file with this content.
    File(&'a str, &'a [u8]),
    /// Sets the mode of a file or folder made before.
    Mode(&'a str, u32),
    /// A symlink to this target, which need not exist.
    Link(&'a str, &'a str),
    /// A named pipe: a transfer skips it and lists it.
    Fifo(&'a str),
}

/// Makes `items` below `root`, creating `root` first.
pub fn build(root: &Path, items: &[Item]) {
    fs::create_dir_all(root).unwrap();
    for item in items {
        match *item {
            Item::Dir(rel) => fs::create_dir_all(root.join(rel)).unwrap(),
            Item::File(rel, content) => fs::write(root.join(rel), content).unwrap(),
            Item::Mode(rel, mode) => {
                fs::set_permissions(root.join(rel), fs::Permissions::from_mode(mode)).unwrap()
            }
            Item::Link(rel, target) => symlink(target, root.join(rel)).unwrap(),
            Item::Fifo(rel) => {
                use std::os::unix::ffi::OsStrExt;
                let path = std::ffi::CString::new(root.join(rel).as_os_str().as_bytes()).unwrap();
                // SAFETY: a valid C string naming a path in the test's folder.
                assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
            }
        }
    }
}

/// Everything under `root` as relative path → `dir MODE`, `link TARGET`,
/// `file MODE CHECKSUM` (see [`checksum`]) or `other`.
pub fn manifest(root: &Path) -> BTreeMap<String, String> {
    manifest_with(root, checksum)
}

/// [`manifest`], with `digest` describing each file's content.
pub fn manifest_with(root: &Path, digest: fn(&[u8]) -> String) -> BTreeMap<String, String> {
    fn walk(
        root: &Path,
        dir: &Path,
        digest: fn(&[u8]) -> String,
        out: &mut BTreeMap<String, String>,
    ) {
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
                format!("link {}", fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                walk(root, &path, digest, out);
                format!("dir {mode:o}")
            } else if meta.is_file() {
                format!("file {mode:o} {}", digest(&fs::read(&path).unwrap()))
            } else {
                "other".into()
            };
            out.insert(rel, desc);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, digest, &mut out);
    out
}

/// Length and a 64-bit hash of `content`: enough to tell copies apart.
pub fn checksum(content: &[u8]) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    content.hash(&mut hasher);
    format!("{} bytes #{:016x}", content.len(), hasher.finish())
}

/// A transfer's temporary files anywhere under `root` (none when `root`
/// does not exist).
pub fn temp_files(root: &Path) -> Vec<PathBuf> {
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
