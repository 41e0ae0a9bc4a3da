//! Writing a file or a folder as a transfer's tar stream. The walk keeps
//! one open folder per level, not a list of everything, so memory stays
//! the same for ten files or ten million.

use super::error::ArchiveError;
use super::located::Located;
use super::open::{open_regular_in, Symlinks};
use super::pipe::CHUNK_BYTES;
use super::plan::locate_source;
use super::progress::Progress;
use super::trailer::{write_trailer, SkippedTrailer};
use crate::transfer::{ItemKind, SkipKind, Skipped, SKIPPED_LISTED_MAX};
use cap_fs_ext::DirExt;
use cap_std::fs::{Dir, ReadDir};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// A tar block: every entry's contents are padded to a whole number.
const BLOCK_BYTES: u64 = 512;

/// [`pack_at`] for a source named by the agent (every symlink in its path
/// followed).
pub fn pack<W: Write>(
    source: &Path,
    name: &str,
    kind: ItemKind,
    out: W,
    progress: &Progress,
) -> Result<(W, SkippedTrailer), ArchiveError> {
    let at = locate_source(source, "path")?;
    pack_at(&at, source, name, kind, out, progress)
}

/// Writes the source `at` (`shown` names it in messages) as the item
/// `name` to `out`: its entries, then what was skipped, then the end of the
/// archive. Returns `out` for the caller to finish, and the skipped
/// entries. Everything is read through folder handles, from `at` down.
pub fn pack_at<W: Write>(
    at: &Located,
    shown: &Path,
    name: &str,
    kind: ItemKind,
    out: W,
    progress: &Progress,
) -> Result<(W, SkippedTrailer), ArchiveError> {
    let root = PathBuf::from(name);
    let mut packer = Packer {
        builder: tar::Builder::new(out),
        buffer: vec![0; CHUNK_BYTES],
        progress,
        trailer: SkippedTrailer::default(),
        shown: shown.to_path_buf(),
        root: root.clone(),
    };
    match kind {
        // The source itself was named by the agent: a symlink there is
        // followed (its location was resolved already).
        ItemKind::File => packer.file(&at.folder, &at.rest, &root, Symlinks::Follow)?,
        ItemKind::Folder => {
            let folder = if at.rest.as_os_str().is_empty() {
                at.folder.try_clone()
            } else {
                at.folder.open_dir(&at.rest)
            }
            .map_err(|e| packer.failed(&root, "read", e))?;
            let metadata = folder
                .dir_metadata()
                .map_err(|e| packer.failed(&root, "read", e))?;
            packer.folder(&root, &Stat::of(&metadata))?;
            packer.walk(folder, &root)?;
        }
    }
    write_trailer(&mut packer.builder, &packer.trailer).map_err(unsent)?;
    let out = packer
        .builder
        .into_inner()
        .map_err(|e| ArchiveError::Stream {
            source: e,
            done: progress.done(),
        })?;
    Ok((out, packer.trailer))
}

struct Packer<'a, W: Write> {
    builder: tar::Builder<W>,
    /// Where a file's contents pass on their way to `out`.
    buffer: Vec<u8>,
    progress: &'a Progress,
    trailer: SkippedTrailer,
    /// The source as the agent named it, for messages.
    shown: PathBuf,
    /// The item's name, the first part of every archived path.
    root: PathBuf,
}

/// One folder being listed: its listing, its handle, its archived path.
struct Open {
    listing: ReadDir,
    folder: Dir,
    archived: PathBuf,
}

impl<W: Write> Packer<'_, W> {
    /// Every entry below `folder`, depth first.
    fn walk(&mut self, folder: Dir, archived: &Path) -> Result<(), ArchiveError> {
        let listing = folder
            .entries()
            .map_err(|e| self.failed(archived, "read", e))?;
        let mut open = vec![Open {
            listing,
            folder,
            archived: archived.to_path_buf(),
        }];
        while let Some(current) = open.last_mut() {
            let next = current.listing.next();
            let archived_dir = current.archived.clone();
            let entry = match next {
                None => {
                    open.pop();
                    continue;
                }
                Some(Err(e)) => {
                    // The rest of this folder cannot be listed.
                    self.skip(
                        &archived_dir,
                        SkipKind::Unreadable,
                        format!("could not list all of it: {e}"),
                    );
                    open.pop();
                    continue;
                }
                Some(Ok(entry)) => entry,
            };
            let name = PathBuf::from(entry.file_name());
            let archived = archived_dir.join(&name);
            // Not following symlinks: a link is copied as a link.
            let Some(metadata) = self.readable(&archived, entry.metadata()) else {
                continue;
            };
            let kind = metadata.file_type();
            if kind.is_dir() {
                self.folder(&archived, &Stat::of(&metadata))?;
                // A folder swapped for a symlink since it was listed is
                // refused, not followed.
                let listed = current
                    .folder
                    .open_dir_nofollow(&name)
                    .and_then(|sub| Ok((sub.entries()?, sub)));
                match listed {
                    Ok((listing, folder)) => open.push(Open {
                        listing,
                        folder,
                        archived,
                    }),
                    Err(e) => self.skip(
                        &archived,
                        SkipKind::Unreadable,
                        format!("its contents could not be read ({e}); it was copied empty"),
                    ),
                }
            } else if kind.is_file() {
                self.file(&current.folder, &name, &archived, Symlinks::Refuse)?;
            } else if kind.is_symlink() {
                let target = current.folder.read_link_contents(&name);
                self.symlink(target, &archived, &Stat::of(&metadata))?;
            } else {
                let (kind, reason) = special(&metadata);
                self.skip(&archived, kind, reason.to_string());
            }
        }
        Ok(())
    }

    fn folder(&mut self, archived: &Path, stat: &Stat) -> Result<(), ArchiveError> {
        let mut header = header(tar::EntryType::Directory, stat, 0);
        self.builder
            .append_data(&mut header, archived, io::empty())
            .map_err(unsent)?;
        self.progress.add_folder();
        Ok(())
    }

    /// Packs the file `name` in `folder`, as found when it was listed: a
    /// regular file (`symlinks` says whether a symlink there is followed).
    /// What is there when it is opened is checked again, on the open
    /// handle, so a pipe swapped in meanwhile is skipped instead of
    /// blocking the walk forever.
    fn file(
        &mut self,
        folder: &Dir,
        name: &Path,
        archived: &Path,
        symlinks: Symlinks,
    ) -> Result<(), ArchiveError> {
        let opened = open_regular_in(folder, name, symlinks).map_err(io::Error::from);
        let Some(file) = self.readable(archived, opened) else {
            return Ok(());
        };
        let Some(metadata) = self.readable(archived, file.metadata()) else {
            return Ok(());
        };
        let size = metadata.len();
        let mut header = header(tar::EntryType::Regular, &Stat::of_std(&metadata), size);
        // The header (and a long name's extension entry) through tar; the
        // contents straight from the file to `out` below, through one
        // buffer. tar's own copy goes through an 8 KiB buffer on the stack,
        // one more copy of every byte and 32 times the calls.
        self.builder
            .append_data(&mut header, archived, io::empty())
            .map_err(unsent)?;
        let mut data = Exactly {
            inner: file,
            left: size,
            progress: self.progress,
        };
        let out = self.builder.get_mut();
        loop {
            let n = match data.read(&mut self.buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.failed(archived, "read", e)),
            };
            out.write_all(&self.buffer[..n]).map_err(unsent)?;
        }
        let padding = (BLOCK_BYTES - size % BLOCK_BYTES) % BLOCK_BYTES;
        out.write_all(&[0; BLOCK_BYTES as usize][..padding as usize])
            .map_err(unsent)?;
        self.progress.add_file();
        Ok(())
    }

    fn symlink(
        &mut self,
        target: io::Result<PathBuf>,
        archived: &Path,
        stat: &Stat,
    ) -> Result<(), ArchiveError> {
        let Some(target) = self.readable(archived, target) else {
            return Ok(());
        };
        let mut header = header(tar::EntryType::Symlink, stat, 0);
        self.builder
            .append_link(&mut header, archived, &target)
            .map_err(unsent)?;
        self.progress.add_symlink();
        Ok(())
    }

    /// What reading the entry gave, or `None` once it is skipped as
    /// unreadable: one entry that cannot be read does not stop the copy.
    fn readable<T>(&mut self, archived: &Path, read: io::Result<T>) -> Option<T> {
        match read {
            Ok(value) => Some(value),
            Err(e) => {
                self.skip(
                    archived,
                    SkipKind::Unreadable,
                    format!("could not be read: {e}"),
                );
                None
            }
        }
    }

    fn skip(&mut self, archived: &Path, kind: SkipKind, reason: String) {
        if self.trailer.entries.len() < SKIPPED_LISTED_MAX {
            self.trailer.entries.push(Skipped {
                path: archived_name(archived),
                kind,
                reason,
            });
        } else {
            self.trailer.more += 1;
        }
    }

    /// `archived` is where the entry is in the archive; the message names
    /// it on disk, below the source as the agent named it.
    fn failed(&self, archived: &Path, action: &'static str, source: io::Error) -> ArchiveError {
        let below = archived.strip_prefix(&self.root).unwrap_or(archived);
        let path = if below.as_os_str().is_empty() {
            self.shown.clone()
        } else {
            self.shown.join(below)
        };
        ArchiveError::failed_at(&path, action, source, self.progress.done())
    }
}

/// Writing the archive failed: the receiving side stopped taking data.
fn unsent(source: io::Error) -> ArchiveError {
    ArchiveError::Unsent { source }
}

/// The archive name of an entry as people read it.
fn archived_name(archived: &Path) -> String {
    archived.to_string_lossy().replace('\\', "/")
}

/// What an entry's header keeps of its metadata.
struct Stat {
    mode: u32,
    /// Seconds since the epoch; 0 when unknown.
    mtime: u64,
}

impl Stat {
    /// From metadata read through a folder handle.
    fn of(metadata: &cap_std::fs::Metadata) -> Stat {
        Stat {
            mode: cap_mode(metadata),
            mtime: seconds(metadata.modified().ok().map(|t| t.into_std())),
        }
    }

    /// From an open file's own metadata.
    fn of_std(metadata: &std::fs::Metadata) -> Stat {
        Stat {
            mode: std_mode(metadata),
            mtime: seconds(metadata.modified().ok()),
        }
    }
}

fn seconds(time: Option<std::time::SystemTime>) -> u64 {
    time.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs())
}

fn header(kind: tar::EntryType, stat: &Stat, size: u64) -> tar::Header {
    // GNU headers take sizes past 8 GB and long names.
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_size(size);
    header.set_mode(stat.mode);
    header.set_mtime(stat.mtime);
    header
}

#[cfg(unix)]
fn std_mode(metadata: &std::fs::Metadata) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()) & 0o7777
}

#[cfg(unix)]
fn cap_mode(metadata: &cap_std::fs::Metadata) -> u32 {
    cap_std::fs::PermissionsExt::mode(&metadata.permissions()) & 0o7777
}

#[cfg(not(unix))]
fn std_mode(metadata: &std::fs::Metadata) -> u32 {
    windows_mode(metadata.is_dir(), metadata.permissions().readonly())
}

#[cfg(not(unix))]
fn cap_mode(metadata: &cap_std::fs::Metadata) -> u32 {
    windows_mode(metadata.is_dir(), metadata.permissions().readonly())
}

#[cfg(not(unix))]
fn windows_mode(is_dir: bool, readonly: bool) -> u32 {
    let base = if is_dir { 0o755 } else { 0o644 };
    if readonly {
        base & !0o222
    } else {
        base
    }
}

#[cfg(unix)]
fn special(metadata: &cap_std::fs::Metadata) -> (SkipKind, &'static str) {
    use cap_std::fs::FileTypeExt;
    let kind = metadata.file_type();
    if kind.is_fifo() {
        (SkipKind::Pipe, "a named pipe holds no data to copy")
    } else if kind.is_socket() {
        (SkipKind::Socket, "a socket holds no data to copy")
    } else {
        (SkipKind::Device, "a device is not copied")
    }
}

#[cfg(not(unix))]
fn special(_: &cap_std::fs::Metadata) -> (SkipKind, &'static str) {
    (
        SkipKind::Unsupported,
        "neither a file, a folder nor a symlink",
    )
}

/// Exactly `left` bytes of a file, the size its header announced. A file
/// that shrinks while read is an error rather than a short entry that
/// would shift the rest of the archive; one that grows is cut at its size.
struct Exactly<'a, R> {
    inner: R,
    left: u64,
    progress: &'a Progress,
}

impl<R: Read> Read for Exactly<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 || out.is_empty() {
            return Ok(0);
        }
        let want = out
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        match self.inner.read(&mut out[..want])? {
            0 => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file got shorter while it was read",
            )),
            n => {
                self.left -= n as u64;
                self.progress.add_bytes(n as u64);
                Ok(n)
            }
        }
    }
}
