//! Which host files a transfer may touch. Over stdio the MCP client runs as
//! the server's own user, so a host path means what it means in a shell.
//! Over HTTP the client is somebody else: the server's files are not theirs,
//! so host paths are confined beneath `COMPUTER_USE_TRANSFER_ROOT` (with
//! tenants, beneath the tenant's own folder in it), or refused without it.
//!
//! Confinement is resolved through a handle on the root folder (cap-std:
//! `openat2` with `RESOLVE_BENEATH` where the kernel has it), never by
//! comparing strings: every existing component is looked up beneath the
//! root, and symlinks are followed only while they stay beneath it. What a
//! transfer then reads or writes it reaches through a handle on the deepest
//! existing folder, opened beneath the root's handle
//! ([`computer_protocol::archive::Located`]), never by the path again: a
//! folder swapped for a symlink meanwhile, by anyone who can write in the
//! root, cannot lead it out.

use super::error::TransferError;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use computer_protocol::archive::{locate_source, Located};
use std::io;
use std::path::{Component, Path, PathBuf};

/// The variable naming the folder HTTP clients' transfers are confined to.
pub const TRANSFER_ROOT_VAR: &str = "COMPUTER_USE_TRANSFER_ROOT";

/// Where host paths of `file_transfer` (and anything else that writes on
/// the host for an agent) may lead.
#[derive(Debug, Clone)]
pub enum HostFiles {
    /// stdio: the client is the server's user; paths resolve as in a shell.
    Anywhere,
    /// HTTP with a root: only beneath it.
    Beneath(Root),
    /// HTTP without [`TRANSFER_ROOT_VAR`]: no host files at all.
    Refused,
}

/// A root's quota and what its folder held when a transfer began.
#[derive(Debug, Clone)]
pub struct Room {
    pub folder: String,
    pub quota: u64,
    pub used: u64,
}

impl Room {
    /// Bytes a download may still write.
    pub fn left(&self) -> u64 {
        self.quota.saturating_sub(self.used)
    }
}

/// A folder on the host that confined host paths resolve beneath.
#[derive(Debug, Clone)]
pub struct Root {
    /// Canonical: symlinks in the configured path itself are resolved once,
    /// when the server starts.
    path: PathBuf,
    /// Bytes its files may take ([`super::quota`]); `None`: no quota.
    quota: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum RootError {
    #[error("`{TRANSFER_ROOT_VAR}` is `{path}`, which is not an absolute path: name the folder HTTP clients may copy files to and from, for example `{TRANSFER_ROOT_VAR}=/srv/computer-use/files`")]
    Relative { path: String },
    #[error("`{TRANSFER_ROOT_VAR}` is `{path}`, which cannot be used as a folder ({reason}): create it (`mkdir -p {path}`) or name another")]
    Unusable { path: String, reason: String },
    #[error("`{TRANSFER_ROOT_VAR}` is `{path}`, which other users may write into (mode {mode:o}) without the sticky bit: they could put folders and links where clients' files go. Run `chmod go-w {path}`, or name a folder of the server's own")]
    OthersWrite { path: String, mode: u32 },
    #[error("cannot create the tenant folder `{path}` beneath `{TRANSFER_ROOT_VAR}` ({reason}): check that the server's user may write there")]
    Tenant { path: String, reason: String },
}

impl Root {
    /// The root named by [`TRANSFER_ROOT_VAR`]: an existing folder, given as
    /// an absolute path.
    pub fn open(configured: &str) -> Result<Root, RootError> {
        let given = Path::new(configured);
        if !given.is_absolute() {
            return Err(RootError::Relative {
                path: configured.to_string(),
            });
        }
        let unusable = |e: io::Error| RootError::Unusable {
            path: configured.to_string(),
            reason: e.to_string(),
        };
        let path = std::fs::canonicalize(given).map_err(unusable)?;
        let meta = std::fs::metadata(&path).map_err(unusable)?;
        if !meta.is_dir() {
            return Err(unusable(io::Error::other("it is not a folder")));
        }
        if let Some(mode) = open_to_other_writers(&meta) {
            return Err(RootError::OthersWrite {
                path: configured.to_string(),
                mode,
            });
        }
        Ok(Root {
            path,
            quota: Some(super::quota::TRANSFER_QUOTA_DEFAULT_MB * 1024 * 1024),
        })
    }

    /// The folder `name` beneath this root, created (mode 0700) when
    /// missing: one tenant's share of the server's files.
    pub fn tenant(&self, name: &str) -> Result<Root, RootError> {
        let path = self.path.join(name);
        let failed = |e: io::Error| RootError::Tenant {
            path: path.display().to_string(),
            reason: e.to_string(),
        };
        let dir = Dir::open_ambient_dir(&self.path, ambient_authority()).map_err(failed)?;
        match dir.create_dir(name) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(failed(e)),
        }
        // A tenant folder that is a symlink would lead elsewhere.
        let meta = dir.symlink_metadata(name).map_err(failed)?;
        if !meta.is_dir() {
            return Err(failed(io::Error::other("it exists and is not a folder")));
        }
        // Through the root's handle, not the path: a link swapped in
        // meanwhile that leads out of the root is refused, not followed.
        restrict_to_owner(&dir, name).map_err(failed)?;
        Ok(Root {
            path,
            quota: self.quota,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// This root with a quota of `bytes` (`None`: none); its tenants'
    /// folders get the same.
    pub fn with_quota(self, bytes: Option<u64>) -> Root {
        Root {
            quota: bytes,
            ..self
        }
    }

    /// What the folder holds now, against its quota; `None` without a
    /// quota (and then nothing is counted).
    pub async fn room(&self) -> Result<Option<Room>, TransferError> {
        let Some(quota) = self.quota else {
            return Ok(None);
        };
        let path = self.path.clone();
        let used = crate::blocking::run(move || super::quota::used_beneath(&path))
            .await
            .map_err(|e| TransferError::RootUnreadable {
                path: ".".to_string(),
                root: self.path.display().to_string(),
                reason: e.to_string(),
            })?;
        Ok(Some(Room {
            folder: self.path.display().to_string(),
            quota,
            used,
        }))
    }

    /// `typed` resolved beneath the root: relative paths start at the root,
    /// absolute ones must lie beneath it, `~` is the server's home and so
    /// refused, and `..` or a symlink that leads out is refused. The result
    /// is absolute and free of symlinks up to its last existing component;
    /// the part that does not exist yet (a download's new name) follows it.
    pub fn resolve(&self, typed: &str) -> Result<PathBuf, TransferError> {
        if typed.is_empty() {
            return Err(TransferError::EmptyHostPath);
        }
        if typed == "~" || typed.starts_with("~/") || typed.starts_with("~\\") {
            return Err(self.outside(typed, "`~` is the server's home folder"));
        }
        let given = Path::new(typed);
        let relative = if given.is_absolute() {
            match given.strip_prefix(&self.path) {
                Ok(rest) => rest.to_path_buf(),
                Err(_) => return Err(self.outside(typed, "it is an absolute path outside it")),
            }
        } else {
            given.to_path_buf()
        };
        let parts = lexical_parts(&relative)
            .ok_or_else(|| self.outside(typed, "its `..` climbs out of it"))?;
        let dir = Dir::open_ambient_dir(&self.path, ambient_authority())
            .map_err(|e| self.unreadable(typed, e))?;
        // The longest existing prefix is resolved by the handle; the rest
        // does not exist, so it holds no symlink.
        for existing in (1..=parts.len()).rev() {
            let prefix: PathBuf = parts[..existing].iter().collect();
            match dir.canonicalize(&prefix) {
                Ok(inside) => {
                    let mut path = self.path.join(inside);
                    path.extend(&parts[existing..]);
                    return Ok(path);
                }
                // Missing, unless it is a symlink to something missing:
                // creating through it would create wherever it points.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    if dir.symlink_metadata(&prefix).is_ok() {
                        return Err(
                            self.outside(typed, "a symlink in it points to nothing beneath it")
                        );
                    }
                }
                Err(_) if leads_out(&dir, &prefix) => {
                    return Err(self.outside(typed, "a symlink in it leads out of it"))
                }
                Err(e) => return Err(self.unreadable(typed, e)),
            }
        }
        let mut path = self.path.clone();
        path.extend(&parts);
        Ok(path)
    }

    /// [`Root::resolve`], then the deepest existing folder of the result
    /// opened beneath the root's handle: what the transfer works through.
    pub fn locate(&self, typed: &str) -> Result<Located, TransferError> {
        let path = self.resolve(typed)?;
        let inside = path
            .strip_prefix(&self.path)
            .map_err(|_| self.outside(typed, "it is an absolute path outside it"))?;
        let parts: Vec<_> = inside.iter().collect();
        let dir = Dir::open_ambient_dir(&self.path, ambient_authority())
            .map_err(|e| self.unreadable(typed, e))?;
        for existing in (0..=parts.len()).rev() {
            let prefix: PathBuf = parts[..existing].iter().collect();
            let opened = if existing == 0 {
                dir.try_clone()
            } else {
                dir.open_dir(&prefix)
            };
            match opened {
                Ok(folder) => {
                    return Ok(Located {
                        folder,
                        folder_path: self.path.join(&prefix),
                        rest: parts[existing..].iter().collect(),
                    })
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                    ) => {}
                // A folder swapped for a symlink since `resolve` looked.
                Err(_) if leads_out(&dir, &prefix) => {
                    return Err(self.outside(typed, "a symlink in it leads out of it"))
                }
                Err(e) => return Err(self.unreadable(typed, e)),
            }
        }
        unreachable!("the root itself was opened above")
    }

    /// [`Root::locate`], with the path that names what it located: beneath
    /// a root, sources and destinations are located alike.
    fn locate_shown(&self, typed: &str) -> Result<(Located, PathBuf), TransferError> {
        let located = self.locate(typed)?;
        let shown = located.path();
        Ok((located, shown))
    }

    fn outside(&self, typed: &str, why: &'static str) -> TransferError {
        TransferError::OutsideRoot {
            path: typed.to_string(),
            root: self.path.display().to_string(),
            why,
        }
    }

    fn unreadable(&self, typed: &str, e: io::Error) -> TransferError {
        TransferError::RootUnreadable {
            path: typed.to_string(),
            root: self.path.display().to_string(),
            reason: e.to_string(),
        }
    }
}

impl HostFiles {
    /// For an HTTP server: beneath [`TRANSFER_ROOT_VAR`] when it is set.
    pub fn for_http(configured: Option<&str>) -> Result<HostFiles, RootError> {
        match configured.filter(|v| !v.is_empty()) {
            None => Ok(HostFiles::Refused),
            Some(path) => Ok(HostFiles::Beneath(Root::open(path)?)),
        }
    }

    /// The same policy with a quota of `bytes` per folder (see
    /// [`super::quota`]; `None`: none).
    pub fn with_quota(self, bytes: Option<u64>) -> HostFiles {
        match self {
            HostFiles::Beneath(root) => HostFiles::Beneath(root.with_quota(bytes)),
            other => other,
        }
    }

    /// One tenant's share: its own folder beneath the root.
    pub fn for_tenant(&self, name: &str) -> Result<HostFiles, RootError> {
        match self {
            HostFiles::Beneath(root) => Ok(HostFiles::Beneath(root.tenant(name)?)),
            other => Ok(other.clone()),
        }
    }

    /// The host path the agent typed as the source of an upload: located
    /// by this policy, its last symlink followed (the agent named what it
    /// points to). Returns it with the path that names it.
    pub fn locate_source(&self, typed: &str) -> Result<(Located, PathBuf), TransferError> {
        match self {
            HostFiles::Beneath(root) => root.locate_shown(typed),
            _ => {
                let path = self.resolve(typed)?;
                Ok((locate_source(&path, "host_path")?, path))
            }
        }
    }

    /// The host path the agent typed as a download's destination, located
    /// by this policy; a symlink at its end is not followed.
    pub fn locate_destination(&self, typed: &str) -> Result<(Located, PathBuf), TransferError> {
        match self {
            HostFiles::Beneath(root) => root.locate_shown(typed),
            _ => {
                let path = self.resolve(typed)?;
                let located = Located::ambient(&path).map_err(|e| {
                    computer_protocol::archive::ArchiveError::io(&path, "look at", "host_path", e)
                })?;
                Ok((located, path))
            }
        }
    }

    /// The existing folder at the host path the agent typed, located by
    /// this policy and opened.
    pub fn open_folder(&self, typed: &str) -> Result<Dir, TransferError> {
        let (located, path) = self.locate_destination(typed)?;
        if !located.rest.as_os_str().is_empty() {
            return Err(computer_protocol::archive::ArchiveError::NotFound {
                path: path.display().to_string(),
                arg: "host_path",
            }
            .into());
        }
        Ok(located.folder)
    }

    /// Resolves a host path the agent typed, by this policy.
    pub fn resolve(&self, typed: &str) -> Result<PathBuf, TransferError> {
        match self {
            HostFiles::Anywhere => super::paths::resolve_host_path(
                typed,
                super::paths::home().as_deref(),
                &super::paths::working_folder(typed)?,
            ),
            HostFiles::Beneath(root) => root.resolve(typed),
            HostFiles::Refused => Err(TransferError::NoRoot),
        }
    }
}

/// The normal components of `relative` with `.` dropped and `..` applied;
/// `None` when `..` climbs above the start.
fn lexical_parts(relative: &Path) -> Option<Vec<std::ffi::OsString>> {
    let mut parts = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => parts.push(name.to_os_string()),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            // A Windows drive or a root left after strip_prefix: not beneath.
            Component::Prefix(_) | Component::RootDir => return None,
        }
    }
    Some(parts)
}

/// Whether a symlink on the way of `prefix` cannot be resolved beneath the
/// root. cap-std refuses such an escape with an error of its own kind; a
/// plain permission problem is told apart by finding the symlink.
fn leads_out(dir: &Dir, prefix: &Path) -> bool {
    let mut walked = PathBuf::new();
    for part in prefix {
        walked.push(part);
        match dir.symlink_metadata(&walked) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if dir.canonicalize(&walked).is_err() {
                    return true;
                }
            }
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

#[cfg(unix)]
fn restrict_to_owner(root: &Dir, name: &str) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    root.set_permissions(
        name,
        cap_std::fs::Permissions::from_std(std::fs::Permissions::from_mode(0o700)),
    )
}

#[cfg(not(unix))]
fn restrict_to_owner(_: &Dir, _: &str) -> io::Result<()> {
    Ok(())
}

/// The mode of a folder that users other than its owner may write into
/// and whose entries they may replace (no sticky bit).
#[cfg(unix)]
fn open_to_other_writers(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o7777;
    (mode & 0o022 != 0 && mode & 0o1000 == 0).then_some(mode)
}

#[cfg(not(unix))]
fn open_to_other_writers(_: &std::fs::Metadata) -> Option<u32> {
    None
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn root() -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("inside")).unwrap();
        std::fs::write(dir.path().join("inside/a.txt"), "a").unwrap();
        let root = Root::open(dir.path().join("inside").to_str().unwrap()).unwrap();
        (dir, root)
    }

    #[test]
    fn a_root_others_may_write_into_is_refused_unless_sticky() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let set = |mode: u32| {
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap()
        };
        let open = || Root::open(dir.path().to_str().unwrap());
        set(0o777);
        let e = open().unwrap_err().to_string();
        assert!(e.contains("mode 777") && e.contains("chmod go-w"), "{e}");
        set(0o775);
        assert!(open().is_err());
        set(0o1777);
        assert!(open().is_ok());
        set(0o755);
        assert!(open().is_ok());
    }

    fn refused(root: &Root, typed: &str) -> String {
        match root.resolve(typed) {
            Err(e @ TransferError::OutsideRoot { .. }) => e.to_string(),
            other => panic!("`{typed}` should be refused as outside the root, got {other:?}"),
        }
    }

    #[test]
    fn paths_beneath_the_root_resolve_to_real_paths() {
        let (_dir, root) = root();
        let base = root.path().to_path_buf();
        assert_eq!(root.resolve("a.txt").unwrap(), base.join("a.txt"));
        assert_eq!(root.resolve(".").unwrap(), base);
        assert_eq!(
            root.resolve("new/deeper/x").unwrap(),
            base.join("new/deeper/x")
        );
        assert_eq!(root.resolve("sub/../a.txt").unwrap(), base.join("a.txt"));
        let absolute = base.join("a.txt");
        assert_eq!(root.resolve(absolute.to_str().unwrap()).unwrap(), absolute);
        // A symlink that stays inside resolves to its target.
        symlink("a.txt", base.join("link")).unwrap();
        assert_eq!(root.resolve("link").unwrap(), base.join("a.txt"));
    }

    #[test]
    fn every_way_out_is_refused() {
        let (dir, root) = root();
        let base = root.path().to_path_buf();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        assert!(refused(&root, "/etc/hosts").contains("absolute path outside"));
        assert!(refused(&root, "../secret").contains("`..`"));
        assert!(refused(&root, "a/../../secret").contains("`..`"));
        assert!(refused(&root, "~/.ssh").contains("home"));
        assert!(refused(&root, "~").contains("home"));
        symlink(dir.path(), base.join("out")).unwrap();
        assert!(refused(&root, "out").contains("symlink"));
        assert!(refused(&root, "out/secret").contains("symlink"));
        assert!(refused(&root, "out/new-file").contains("symlink"));
        symlink("/etc/hosts", base.join("hosts")).unwrap();
        assert!(refused(&root, "hosts").contains("symlink"));
        // A dangling symlink would create its target wherever it points.
        symlink(dir.path().join("not-yet"), base.join("dangling")).unwrap();
        assert!(refused(&root, "dangling").contains("symlink"));
        assert!(refused(&root, "dangling/x").contains("symlink"));
        symlink("missing-inside", base.join("dangling-inside")).unwrap();
        assert!(refused(&root, "dangling-inside").contains("symlink"));
        // The message names the root and the variable.
        let message = refused(&root, "/etc/hosts");
        assert!(message.contains(TRANSFER_ROOT_VAR), "{message}");
        assert!(message.contains(base.to_str().unwrap()), "{message}");
    }

    /// N5: a folder beneath the root swapped for a symlink out of it, over
    /// and over, while files are copied in and out through that folder.
    /// Whatever each copy's fate, nothing lands outside the root and
    /// nothing outside it is read.
    #[test]
    fn a_folder_swapped_for_a_symlink_in_a_loop_never_leads_out() {
        use computer_protocol::archive::{
            pack, pack_at, plan_at, unpack, Destination, Progress, UnpackOptions,
        };
        use computer_protocol::ItemKind;
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::sync::Arc;
        use std::time::{Duration, Instant};

        let (dir, root) = root();
        let base = root.path().to_path_buf();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "OUTSIDE-SECRET").unwrap();
        std::fs::create_dir(base.join("box")).unwrap();
        std::fs::write(base.join("box/secret.txt"), "inside").unwrap();
        let source = dir.path().join("f.txt");
        std::fs::write(&source, "copied").unwrap();
        let (archive, _) = pack(
            &source,
            "f.txt",
            ItemKind::File,
            Vec::new(),
            &Progress::default(),
        )
        .unwrap();

        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let swapper = std::thread::spawn({
            let (stop, swaps, base, outside) = (
                Arc::clone(&stop),
                Arc::clone(&swaps),
                base.clone(),
                outside.clone(),
            );
            move || {
                // Swapped atomically, so `box` is never missing (a copy
                // would then make it, as a missing folder is made).
                symlink(&outside, base.join("box.link")).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    exchange(&base.join("box"), &base.join("box.link"));
                    exchange(&base.join("box"), &base.join("box.link"));
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            }
        });

        let (mut written, mut read, mut refused) = (0, 0, 0);
        let started = Instant::now();
        let mut round = 0;
        while started.elapsed() < Duration::from_secs(2) {
            round += 1;
            // Into the root: a download's path.
            let typed = format!("box/new-{round}.txt");
            let landed = root.locate(&typed).and_then(|at| {
                let shown = at.path();
                let target = plan_at(
                    &at,
                    &Destination {
                        path: &shown,
                        trailing_slash: false,
                        name: "f.txt",
                        kind: ItemKind::File,
                        overwrite: false,
                        windows_names: false,
                        arg: "host_path",
                    },
                )?;
                let confined = UnpackOptions {
                    confined: true,
                    ..UnpackOptions::default()
                };
                Ok(unpack(
                    &archive[..],
                    &target,
                    confined,
                    &Progress::default(),
                )?)
            });
            match landed {
                Ok(_) => written += 1,
                Err(_) => refused += 1,
            }
            // Out of the root: an upload's source.
            let sent = root.locate("box/secret.txt").and_then(|at| {
                let (tar, _) = pack_at(
                    &at,
                    &at.path(),
                    "secret.txt",
                    ItemKind::File,
                    Vec::new(),
                    &Progress::default(),
                )?;
                Ok(tar)
            });
            if let Ok(tar) = sent {
                read += 1;
                assert!(
                    !tar.windows(14).any(|w| w == b"OUTSIDE-SECRET"),
                    "round {round}: a file outside the root was read"
                );
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();

        let names: Vec<_> = std::fs::read_dir(&outside)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["secret.txt"], "files were written outside the root");
        // The race was run, both ways, many times.
        let swaps = swaps.load(Ordering::Relaxed);
        eprintln!(
            "{round} rounds, {swaps} swaps: {written} written, {refused} refused, {read} read"
        );
        assert!(
            swaps > 100 && written > 10 && read > 10,
            "{round} rounds, {swaps} swaps"
        );
    }

    /// Swaps what two names hold in one step (`RENAME_EXCHANGE`).
    fn exchange(a: &Path, b: &Path) {
        use std::os::unix::ffi::OsStrExt;
        let (a, b) = (
            std::ffi::CString::new(a.as_os_str().as_bytes()).unwrap(),
            std::ffi::CString::new(b.as_os_str().as_bytes()).unwrap(),
        );
        // SAFETY: two valid C strings naming paths in the test's folder.
        let done = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        assert_eq!(done, 0, "{}", io::Error::last_os_error());
    }

    #[test]
    fn without_a_root_over_http_nothing_resolves() {
        let e = HostFiles::for_http(None)
            .unwrap()
            .resolve("a.txt")
            .unwrap_err();
        assert!(e.to_string().contains(TRANSFER_ROOT_VAR), "{e}");
    }

    #[test]
    fn a_root_must_be_an_existing_absolute_folder() {
        assert!(matches!(
            Root::open("files"),
            Err(RootError::Relative { .. })
        ));
        let e = Root::open("/no/such/folder").unwrap_err();
        assert!(e.to_string().contains("mkdir -p /no/such/folder"), "{e}");
    }

    #[test]
    fn a_tenant_gets_its_own_private_folder() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, root) = root();
        let alice = root.tenant("alice").unwrap();
        assert_eq!(alice.path(), root.path().join("alice"));
        let mode = std::fs::metadata(alice.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        // Another tenant's folder is outside alice's root.
        root.tenant("bob").unwrap();
        assert!(refused(&alice, "../bob").contains("`..`"));
        // A planted symlink in place of a tenant folder is refused.
        symlink("/etc", root.path().join("eve")).unwrap();
        assert!(matches!(root.tenant("eve"), Err(RootError::Tenant { .. })));
    }
}
