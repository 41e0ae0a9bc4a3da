//! Writing a transfer's tar stream at a checked destination, entry by
//! entry: the overwrite rules for each, every file through a temporary name,
//! and nothing ever written outside the destination, whoever made the
//! archive.
//!
//! Safety does not trust the archive: names with `..` or a leading `/` and
//! entries outside the copied item are refused; no entry is written through
//! a symlink (each folder on the way is checked to be a real folder, so a
//! link the archive itself placed cannot redirect a later entry); a hard
//! link must point at a regular file inside the copy. Refused entries are
//! listed in the summary, never dropped silently.
//!
//! What is written can still make the receiver run the sender's code later
//! (git hooks and config, symlinks out of the copy): such entries are
//! written, since copying a repository back is the point, and listed in the
//! summary's `cautions` for a look (`crate::transfer::caution`). A symlink
//! never replaces a regular file already there, even with `overwrite`: an
//! editor saving that file would then write wherever the link points.

use super::error::ArchiveError;
use super::extension::{Extended, Seen};
use super::pipe::{Tracked, CHUNK_BYTES};
use super::plan::{found_in, Target};
use super::progress::Progress;
use super::temp::TempPath;
use super::write::{finish_file, make_symlink, os_part, set_mode};
use crate::transfer::names::shown_name;
use crate::transfer::{
    git_caution, parts_below, step, symlink_leaves_copy, symlink_surely_inside,
    windows_name_problem, windows_symlink_problem, Caution, CautionKind, Clash, EntryKind, Found,
    ItemKind, SkipKind, Skipped, Step, TransferSummary,
};
use cap_fs_ext::DirExt;
use cap_std::fs::Dir;
use std::cell::RefCell;
use std::collections::HashSet;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Bytes accepted after the end of the archive (tar pads its end with
/// zeros); more is not a transfer.
const TRAILING_BYTES_MAX: u64 = 1024 * 1024;

/// Folders closed to the owner's writing whose mode waits for the end.
/// Beyond this many, a folder keeps the owner's write permission, so a
/// hostile archive of millions of such folders cannot grow the list.
const DEFERRED_MODES_MAX: usize = 16 * 1024;

/// Folders skipped for their name whose contents are dropped unlisted.
/// Beyond this many, what they hold is skipped and listed entry by entry
/// (the same name rule catches it), so the set stays bounded.
const SKIPPED_FOLDERS_MAX: usize = 4 * 1024;

#[derive(Debug, Clone, Copy, Default)]
pub struct UnpackOptions {
    /// Skip, and list, names and symlinks that Windows rejects.
    pub windows_names: bool,
    /// Permission bits cleared from every file and folder written, as tar
    /// run by anyone but root does with the umask. 0 keeps the archive's.
    pub umask: u32,
    /// The copy lands beneath a transfer root that confines an HTTP
    /// client: a symlink that could lead out of the copy is skipped and
    /// listed, so no later transfer (or one running beside this) can be led
    /// out of the root through a link this one wrote.
    pub confined: bool,
}

impl UnpackOptions {
    /// The rules of the OS this runs on, with this process's umask.
    pub fn for_this_os() -> UnpackOptions {
        UnpackOptions {
            windows_names: cfg!(windows),
            umask: super::umask::process_umask(),
            confined: false,
        }
    }
}

/// Reads the archive from `reader` into `target` (from [`super::plan`](fn@super::plan))
/// and reads `reader` to its end, so that a sender that stopped early is
/// an error even when its archive happened to look complete.
pub fn unpack<R: Read>(
    reader: R,
    target: &Target,
    options: UnpackOptions,
    progress: &Progress,
) -> Result<TransferSummary, ArchiveError> {
    let stream_error = Rc::new(RefCell::new(None));
    let mut archive = tar::Archive::new(Tracked {
        inner: reader,
        error: Rc::clone(&stream_error),
    });
    let mut unpacker = Unpacker {
        target,
        options,
        progress,
        summary: TransferSummary {
            path: target.path.display().to_string(),
            ..TransferSummary::default()
        },
        root_done: false,
        trailer_seen: false,
        copy: None,
        verified: None,
        skipped_folders: HashSet::new(),
        deferred_modes: Vec::new(),
        buffer: vec![0; CHUNK_BYTES],
    };
    let mut result = unpacker.run(&mut archive);
    unpacker.apply_deferred_modes();
    if result.is_ok() {
        result = unpacker.drain(archive.into_inner());
    }
    let blame_stream = stream_error.borrow_mut().take();
    match (result, blame_stream) {
        (Ok(()), _) => {
            let done = progress.done();
            let mut summary = unpacker.summary;
            summary.files = done.files;
            summary.folders = done.folders;
            summary.symlinks = done.symlinks;
            summary.bytes = done.bytes;
            Ok(summary)
        }
        // Whatever failed, it failed because the data stopped coming.
        (Err(_), Some(source)) => Err(ArchiveError::Stream {
            source,
            done: progress.done(),
        }),
        (Err(e), None) => Err(e),
    }
}

/// Reads from `reader` until `buffer` is full or the data ends; the count
/// read. The stream's pieces rarely match the buffer, and writing each as
/// it comes tripled the writes of a big file.
fn fill(reader: &mut impl Read, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Folder,
    Symlink,
    HardLink,
}

/// One entry's place: the folder that holds it, opened, and its name
/// there; `path` names it in messages.
struct At<'p> {
    folder: &'p Dir,
    leaf: PathBuf,
    path: &'p Path,
}

struct Unpacker<'a> {
    target: &'a Target,
    options: UnpackOptions,
    progress: &'a Progress,
    summary: TransferSummary,
    /// The copied item's own entry was written.
    root_done: bool,
    /// The sender's list of skipped entries arrived; a sender writes one.
    trailer_seen: bool,
    /// The copied folder, opened once it is made or found.
    copy: Option<Rc<Dir>>,
    /// The last folder known to be a real folder (not a symlink) all the way
    /// down from the copy, by its parts below it, opened; entries come
    /// folder by folder, so this saves opening the same folders for every
    /// file.
    verified: Option<(Vec<Vec<u8>>, Rc<Dir>)>,
    /// Folders skipped for their name: what they hold is covered by their
    /// own listing.
    skipped_folders: HashSet<Vec<Vec<u8>>>,
    /// Folders made without the owner's write permission get their mode at
    /// the end, so that their contents can be written first; by their path
    /// below the target's anchor.
    deferred_modes: Vec<(PathBuf, u32)>,
    buffer: Vec<u8>,
}

impl Unpacker<'_> {
    fn run<R: Read>(&mut self, archive: &mut tar::Archive<R>) -> Result<(), ArchiveError> {
        // Raw: extension entries are read here, with a cap (`extension`).
        let entries = archive.entries().map_err(|e| self.bad(e.to_string()))?;
        let mut extended = Extended::default();
        for entry in entries.raw(true) {
            let mut entry = entry.map_err(|e| self.bad(e.to_string()))?;
            match extended.absorb(&mut entry).map_err(|why| self.bad(why))? {
                Seen::Extension => continue,
                Seen::Global(trailer) => {
                    if let Some(trailer) = trailer {
                        if std::mem::replace(&mut self.trailer_seen, true) {
                            // Each list may be megabytes; only one is sent.
                            return Err(self.bad("it holds more than one list of skipped entries"));
                        }
                        for skipped in trailer.entries {
                            self.summary.skip(skipped);
                        }
                        self.summary.skip_unlisted(trailer.more);
                    }
                    continue;
                }
                Seen::Entry => {}
            }
            let extended = std::mem::take(&mut extended);
            extended
                .check_size(entry.header())
                .map_err(|why| self.bad(why))?;
            self.entry(&mut entry, extended)?;
        }
        if !self.root_done {
            return Err(self.bad("it holds no entry for the item itself"));
        }
        Ok(())
    }

    fn entry<R: Read>(
        &mut self,
        entry: &mut tar::Entry<'_, R>,
        extended: Extended,
    ) -> Result<(), ArchiveError> {
        let header_kind = entry.header().entry_type();
        let raw = extended
            .path
            .unwrap_or_else(|| entry.path_bytes().into_owned());
        let link = extended
            .link
            .or_else(|| entry.link_name_bytes().map(|t| t.into_owned()));
        let parts: Vec<Vec<u8>> = match parts_below(&raw, &self.target.name) {
            Ok(parts) => parts.into_iter().map(<[u8]>::to_vec).collect(),
            Err(unsafe_name) => {
                self.skip(&raw, SkipKind::Refused, unsafe_name.reason().to_string());
                return Ok(());
            }
        };
        if (1..parts.len()).any(|depth| self.skipped_folders.contains(&parts[..depth])) {
            return Ok(());
        }
        let kind = match header_kind {
            tar::EntryType::Regular | tar::EntryType::Continuous => Kind::File,
            tar::EntryType::Directory => Kind::Folder,
            tar::EntryType::Symlink => Kind::Symlink,
            tar::EntryType::Link => Kind::HardLink,
            tar::EntryType::Fifo => {
                self.skip(
                    &raw,
                    SkipKind::Pipe,
                    "a named pipe holds no data to copy".into(),
                );
                return Ok(());
            }
            tar::EntryType::Char | tar::EntryType::Block => {
                self.skip(&raw, SkipKind::Device, "a device is not copied".into());
                return Ok(());
            }
            other => {
                self.skip(
                    &raw,
                    SkipKind::Unsupported,
                    format!(
                        "archive entries of type `{}` are not copied",
                        other.as_byte() as char
                    ),
                );
                return Ok(());
            }
        };
        if self.options.windows_names {
            if let Some(problem) = parts.iter().find_map(|part| windows_name_problem(part)) {
                if kind == Kind::Folder && self.skipped_folders.len() < SKIPPED_FOLDERS_MAX {
                    self.skipped_folders.insert(parts.clone());
                }
                self.skip(&raw, SkipKind::WindowsName, problem.to_string());
                return Ok(());
            }
        }
        let header = entry.header();
        let mode = header
            .mode()
            .unwrap_or(if kind == Kind::Folder { 0o755 } else { 0o644 });
        let mtime = header.mtime().ok();

        if parts.is_empty() {
            return self.root(entry, kind, mode, mtime);
        }
        if self.target.kind == ItemKind::File {
            return Err(self.bad(format!("`{}` is below the copied file", shown_name(&raw))));
        }
        if !self.root_done {
            // An archive may leave out the item's own entry; it is a folder.
            self.root_folder(None)?;
        }
        let path = self.join(&parts);
        let (last, above) = parts.split_last().expect("parts is not empty");
        let folder = match self.folders_to(above, true)? {
            Ok(folder) => folder,
            Err(refusal) => {
                self.skip(&raw, SkipKind::Refused, refusal.to_string());
                return Ok(());
            }
        };
        let at = At {
            folder: &folder,
            leaf: PathBuf::from(os_part(last)),
            path: &path,
        };
        match kind {
            Kind::Folder => self.folder(&at, Some(mode)),
            Kind::File => self.file(entry, &at, mode, mtime),
            Kind::Symlink => self.symlink(link, &raw, &at, parts.len() - 1),
            Kind::HardLink => self.hard_link(link, &raw, &at, &parts),
        }
    }

    /// The entry for the copied item itself, written at the target path.
    fn root<R: Read>(
        &mut self,
        entry: &mut tar::Entry<'_, R>,
        kind: Kind,
        mode: u32,
        mtime: Option<u64>,
    ) -> Result<(), ArchiveError> {
        let expected = match self.target.kind {
            ItemKind::File => Kind::File,
            ItemKind::Folder => Kind::Folder,
        };
        if kind != expected {
            return Err(self.bad(format!(
                "the item arrived as {}, but a {} was announced",
                match kind {
                    Kind::File => "a file",
                    Kind::Folder => "a folder",
                    Kind::Symlink => "a symlink",
                    Kind::HardLink => "a hard link",
                },
                self.target.kind.noun()
            )));
        }
        if self.root_done && kind == Kind::Folder {
            // Repeated: the folder is there already.
            return Ok(());
        }
        if kind == Kind::Folder {
            return self.root_folder(Some(mode));
        }
        let path = self.target.path.clone();
        let folder = self.parents_of_target()?;
        let at = At {
            folder: &folder,
            leaf: self.target_leaf(),
            path: &path,
        };
        self.file(entry, &at, mode, mtime)?;
        self.root_done = true;
        Ok(())
    }

    /// The copy's own name in the folder that receives it.
    fn target_leaf(&self) -> PathBuf {
        self.target
            .below
            .file_name()
            .map(PathBuf::from)
            .unwrap_or_default()
    }

    /// The folders between the anchor and the copy, which the `cp -r` rule
    /// creates when missing, made beneath the anchor; returns the one that
    /// receives the copy, opened.
    fn parents_of_target(&self) -> Result<Dir, ArchiveError> {
        let anchor = &self.target.anchor;
        let parent = self.target.below.parent().unwrap_or(Path::new(""));
        let shown = self.target.path.parent().unwrap_or(Path::new("/"));
        if parent.as_os_str().is_empty() {
            return anchor
                .try_clone()
                .map_err(|e| self.failed(shown, "open the folder", e));
        }
        anchor
            .create_dir_all(parent)
            .and_then(|()| anchor.open_dir(parent))
            .map_err(|e| match e.kind() {
                io::ErrorKind::AlreadyExists | io::ErrorKind::NotADirectory => {
                    ArchiveError::ParentNotFolder {
                        path: shown.display().to_string(),
                        found: "a file",
                        arg: self.target.arg,
                    }
                }
                _ => self.failed(shown, "create the folder", e),
            })
    }

    fn root_folder(&mut self, mode: Option<u32>) -> Result<(), ArchiveError> {
        let parent = self.parents_of_target()?;
        let path = self.target.path.clone();
        let at = At {
            folder: &parent,
            leaf: self.target_leaf(),
            path: &path,
        };
        self.folder(&at, mode)?;
        let copy = parent
            .open_dir_nofollow(&at.leaf)
            .map_err(|e| self.failed(&path, "open the folder", e))?;
        self.root_done = true;
        self.copy = Some(Rc::new(copy));
        Ok(())
    }

    fn folder(&mut self, at: &At<'_>, mode: Option<u32>) -> Result<(), ArchiveError> {
        let found = self.look(at)?;
        match step(EntryKind::Folder, found, self.target.overwrite) {
            Ok(Step::Create) => self.make_folder(at, mode)?,
            Ok(_) => {}
            Err(clash) => return Err(self.stopped(at.path, clash)),
        }
        self.progress.add_folder();
        Ok(())
    }

    /// Makes one folder; `mode` from the archive, or the usual mode for the
    /// umask when the archive left the folder out.
    fn make_folder(&mut self, at: &At<'_>, mode: Option<u32>) -> Result<(), ArchiveError> {
        at.folder
            .create_dir(&at.leaf)
            .map_err(|e| self.failed(at.path, "create the folder", e))?;
        if let Some(mode) = mode {
            let mut mode = self.safe_mode(mode);
            if mode & 0o700 != 0o700 && self.deferred_modes.len() < DEFERRED_MODES_MAX {
                let below = self.below_anchor(at.path);
                self.deferred_modes.push((below, mode));
            } else {
                mode |= 0o700;
                set_mode(at.folder, &at.leaf, mode)
                    .map_err(|e| self.failed(at.path, "set the mode of", e))?;
            }
        }
        Ok(())
    }

    /// A path inside the copy, below the target's anchor.
    fn below_anchor(&self, path: &Path) -> PathBuf {
        let inside = path.strip_prefix(&self.target.path).unwrap_or(path);
        if inside.as_os_str().is_empty() {
            self.target.below.clone()
        } else {
            self.target.below.join(inside)
        }
    }

    /// Opens every folder from the copy down through `parts`, each checked
    /// to be a real folder, making missing ones when `make`. Returns the
    /// last one, or why the entry is refused when one of them is a
    /// symlink.
    fn folders_to(
        &mut self,
        parts: &[Vec<u8>],
        make: bool,
    ) -> Result<Result<Rc<Dir>, FolderRefused>, ArchiveError> {
        if let Some((verified, folder)) = &self.verified {
            if verified.as_slice() == parts {
                return Ok(Ok(Rc::clone(folder)));
            }
        }
        let mut current = Rc::clone(self.copy.as_ref().expect("the copy's folder is made first"));
        let mut path = self.target.path.clone();
        for part in parts {
            path.push(os_part(part));
            let at = At {
                folder: &current,
                leaf: PathBuf::from(os_part(part)),
                path: &path,
            };
            match self.look(&at)? {
                Found::Folder => {}
                Found::Nothing if make => {
                    self.make_folder(&at, None)?;
                    self.progress.add_folder();
                }
                Found::Symlink => return Ok(Err(FolderRefused::Symlink(path))),
                Found::Nothing => return Ok(Err(FolderRefused::Missing(path))),
                found => {
                    return Err(self.stopped(&path, Clash::FolderOver { found }));
                }
            }
            // Not followed if a symlink took its place since the look.
            let next = current
                .open_dir_nofollow(&at.leaf)
                .map_err(|e| self.failed(&path, "open the folder", e))?;
            current = Rc::new(next);
        }
        if make {
            self.verified = Some((parts.to_vec(), Rc::clone(&current)));
        }
        Ok(Ok(current))
    }

    fn file<R: Read>(
        &mut self,
        entry: &mut tar::Entry<'_, R>,
        at: &At<'_>,
        mode: u32,
        mtime: Option<u64>,
    ) -> Result<(), ArchiveError> {
        let path = at.path;
        let found = self.look(at)?;
        step(EntryKind::File, found, self.target.overwrite)
            .map_err(|clash| self.stopped(path, clash))?;
        let (temp, mut file) = TempPath::create_file(at.folder)
            .map_err(|e| self.failed(path.parent().unwrap_or(path), "write in", e))?;
        let expected = entry.size();
        let mut written = 0u64;
        loop {
            let n = match fill(entry, &mut self.buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) => return Err(self.bad(format!("reading `{}`: {e}", path.display()))),
            };
            file.write_all(&self.buffer[..n])
                .map_err(|e| self.failed(path, "write", e))?;
            written += n as u64;
            self.progress.add_bytes(n as u64);
        }
        if written != expected {
            return Err(self.bad(format!(
                "it ended {} bytes into `{}`, which should have {expected}",
                written,
                path.display()
            )));
        }
        finish_file(&file, self.safe_mode(mode), mtime)
            .map_err(|e| self.failed(path, "set the mode of", e))?;
        drop(file);
        temp.rename_to(&at.leaf)
            .map_err(|e| self.failed(path, "write", e))?;
        self.progress.add_file();
        self.note_git(path);
        Ok(())
    }

    /// `depth`: folders between the copied item and the link.
    fn symlink(
        &mut self,
        target: Option<Vec<u8>>,
        raw: &[u8],
        at: &At<'_>,
        depth: usize,
    ) -> Result<(), ArchiveError> {
        let path = at.path;
        let Some(target) = target else {
            return Err(self.bad(format!("the symlink `{}` has no target", shown_name(raw))));
        };
        if self.options.windows_names {
            if let Some(why) = windows_symlink_problem(&target) {
                self.skip(raw, SkipKind::WindowsSymlink, why);
                return Ok(());
            }
        }
        if self.options.confined && !symlink_surely_inside(depth, &target) {
            self.skip(
                raw,
                SkipKind::Refused,
                format!(
                    "it points to `{}`: beneath the transfer root a symlink may only point inside the copy (a relative target whose `..` come first and climb no higher than the copied item), so it was not made",
                    shown_name(&target)
                ),
            );
            return Ok(());
        }
        let found = self.look(at)?;
        step(EntryKind::Symlink, found, self.target.overwrite)
            .map_err(|clash| self.stopped(path, clash))?;
        if found == Found::File {
            self.skip(
                raw,
                SkipKind::Refused,
                format!(
                    "`{}` is a file, and a symlink never replaces a file: saving it would write wherever the link points; the file is kept",
                    path.display()
                ),
            );
            return Ok(());
        }
        let temp = match TempPath::create_with(at.folder, |folder, name| {
            make_symlink(&target, folder, name)
        }) {
            Ok(temp) => temp,
            Err(e) if cfg!(windows) => {
                self.skip(
                    raw,
                    SkipKind::WindowsSymlink,
                    format!("Windows refused to create it ({e}); creating symlinks needs Developer Mode or an administrator"),
                );
                return Ok(());
            }
            Err(e) => return Err(self.failed(path, "create the symlink", e)),
        };
        temp.rename_to(&at.leaf)
            .map_err(|e| self.failed(path, "create the symlink", e))?;
        self.progress.add_symlink();
        if !self.note_git(path) && symlink_leaves_copy(depth, &target) {
            self.summary.caution(Caution {
                path: path.display().to_string(),
                kind: CautionKind::SymlinkOutside,
                target: Some(shown_name(&target)),
            });
        }
        Ok(())
    }

    /// `entry`: the link's own parts below the copy.
    fn hard_link(
        &mut self,
        link: Option<Vec<u8>>,
        raw: &[u8],
        at: &At<'_>,
        entry: &[Vec<u8>],
    ) -> Result<(), ArchiveError> {
        let path = at.path;
        let Some(link) = link else {
            return Err(self.bad(format!("the hard link `{}` has no target", shown_name(raw))));
        };
        let parts: Vec<Vec<u8>> = match parts_below(&link, &self.target.name) {
            Ok(parts) if !parts.is_empty() => parts.into_iter().map(<[u8]>::to_vec).collect(),
            Ok(_) => {
                self.skip(
                    raw,
                    SkipKind::Refused,
                    "a hard link must point at a file inside the copy".into(),
                );
                return Ok(());
            }
            Err(why) => {
                self.skip(
                    raw,
                    SkipKind::Refused,
                    format!(
                        "its hard link target `{}` is refused: {}",
                        shown_name(&link),
                        why.reason()
                    ),
                );
                return Ok(());
            }
        };
        let (source_leaf, source_above) = parts.split_last().expect("parts is not empty");
        let source_folder = match self.folders_to(source_above, false)? {
            Ok(folder) => folder,
            Err(refusal) => {
                self.skip(
                    raw,
                    SkipKind::Refused,
                    format!("its hard link target is refused: {refusal}"),
                );
                return Ok(());
            }
        };
        let source = self.join(&parts);
        let source_at = At {
            folder: &source_folder,
            leaf: PathBuf::from(os_part(source_leaf)),
            path: &source,
        };
        let found = self.look(&source_at)?;
        if found != Found::File {
            self.skip(
                raw,
                SkipKind::Refused,
                format!(
                    "a hard link must point at a file inside the copy, and `{}` is {}",
                    source.display(),
                    found.noun()
                ),
            );
            return Ok(());
        }
        if parts == entry {
            // A link to itself: nothing to do.
            self.progress.add_file();
            return Ok(());
        }
        let found = self.look(at)?;
        step(EntryKind::File, found, self.target.overwrite)
            .map_err(|clash| self.stopped(path, clash))?;
        let temp = TempPath::create_with(at.folder, |folder, name| {
            source_folder.hard_link(&source_at.leaf, folder, name)
        })
        .map_err(|e| self.failed(path, "create the hard link", e))?;
        let temp_name = temp.name().to_path_buf();
        temp.rename_to(&at.leaf)
            .map_err(|e| self.failed(path, "create the hard link", e))?;
        // Renaming a link over another link to the same file does nothing
        // and leaves the temporary name behind.
        let _ = at.folder.remove_file(temp_name);
        self.progress.add_file();
        self.note_git(path);
        Ok(())
    }

    /// Lists a file or symlink just written where git would run it or
    /// follow it; says whether it did.
    fn note_git(&mut self, path: &Path) -> bool {
        let Some(kind) = git_caution(path, false) else {
            return false;
        };
        self.summary.caution(Caution {
            path: path.display().to_string(),
            kind,
            target: None,
        });
        true
    }

    /// Reads what follows the archive, up to the sender's explicit end.
    fn drain<R: Read>(&self, mut rest: R) -> Result<(), ArchiveError> {
        let mut limited = (&mut rest).take(TRAILING_BYTES_MAX + 1);
        let trailing =
            io::copy(&mut limited, &mut io::sink()).map_err(|e| self.bad(e.to_string()))?;
        if trailing > TRAILING_BYTES_MAX {
            return Err(self.bad("more data follows the end of the archive"));
        }
        Ok(())
    }

    fn apply_deferred_modes(&mut self) {
        // Deepest first, so a folder closed to writing is closed last.
        for (below, mode) in self.deferred_modes.drain(..).rev() {
            let _ = set_mode(&self.target.anchor, &below, mode);
        }
    }

    /// Permission bits and the sticky bit, less the umask; set-user-id and
    /// set-group-id are dropped. This is what a tar run by anyone but root
    /// does, so a copy never grants more than the files it came from to
    /// whoever runs it, nor more than the person's umask allows.
    fn safe_mode(&self, mode: u32) -> u32 {
        mode & 0o1777 & !self.options.umask
    }

    fn join(&self, parts: &[Vec<u8>]) -> PathBuf {
        let mut path = self.target.path.clone();
        for part in parts {
            path.push(os_part(part));
        }
        path
    }

    fn look(&self, at: &At<'_>) -> Result<Found, ArchiveError> {
        found_in(at.folder, &at.leaf).map_err(|e| self.failed(at.path, "look at", e))
    }

    fn skip(&mut self, raw: &[u8], kind: SkipKind, reason: String) {
        let path = shown_name(raw);
        let path = path.trim_end_matches('/').to_string();
        self.summary.skip(Skipped { path, kind, reason });
    }

    fn stopped(&self, path: &Path, clash: Clash) -> ArchiveError {
        ArchiveError::StoppedAt {
            path: path.display().to_string(),
            clash,
            done: self.progress.done(),
        }
    }

    fn failed(&self, path: &Path, action: &'static str, source: io::Error) -> ArchiveError {
        ArchiveError::failed_at(path, action, source, self.progress.done())
    }

    fn bad(&self, why: impl std::fmt::Display) -> ArchiveError {
        ArchiveError::BadArchive {
            name: self.target.name.clone(),
            why: why.to_string(),
            done: self.progress.done(),
        }
    }
}
/// Why an entry's folder path cannot be used: the entry is skipped with
/// this as its reason.
#[derive(Debug, thiserror::Error)]
enum FolderRefused {
    #[error("`{}` is a symlink, and nothing is ever written through a symlink", .0.display())]
    Symlink(PathBuf),
    #[error("`{}` does not exist", .0.display())]
    Missing(PathBuf),
}
