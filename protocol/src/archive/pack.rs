//! Writing a file or a folder as a transfer's tar stream. The walk keeps
//! one open folder per level, not a list of everything, so memory stays
//! the same for ten files or ten million.

use super::error::ArchiveError;
use super::open::{open_regular, Symlinks};
use super::pipe::CHUNK_BYTES;
use super::progress::Progress;
use super::trailer::{write_trailer, SkippedTrailer};
use crate::transfer::{ItemKind, SkipKind, Skipped, SKIPPED_LISTED_MAX};
use std::cell::RefCell;
use std::fs::{self, Metadata};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// Writes `source` as the item `name` to `out`: its entries, then what was
/// skipped, then the end of the archive. Returns `out` for the caller to
/// finish, and the skipped entries.
pub fn pack<W: Write>(
    source: &Path,
    name: &str,
    kind: ItemKind,
    out: W,
    progress: &Progress,
) -> Result<(W, SkippedTrailer), ArchiveError> {
    let mut packer = Packer {
        builder: tar::Builder::new(out),
        progress,
        trailer: SkippedTrailer::default(),
    };
    // The source itself was named by the agent: a symlink there is followed.
    let metadata = fs::metadata(source).map_err(|e| packer.failed(source, "read", e))?;
    let root = PathBuf::from(name);
    match kind {
        ItemKind::File => packer.file(source, &root, Symlinks::Follow)?,
        ItemKind::Folder => {
            packer.folder(&root, &metadata)?;
            packer.walk(source, &root)?;
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
    progress: &'a Progress,
    trailer: SkippedTrailer,
}

impl<W: Write> Packer<'_, W> {
    /// Every entry below the folder at `dir`, depth first.
    fn walk(&mut self, dir: &Path, archived: &Path) -> Result<(), ArchiveError> {
        let mut open = vec![(
            fs::read_dir(dir).map_err(|e| self.failed(dir, "read", e))?,
            archived.to_path_buf(),
        )];
        while let Some((listing, archived_dir)) = open.last_mut() {
            let next = listing.next();
            let archived_dir = archived_dir.clone();
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
            let path = entry.path();
            let archived = archived_dir.join(entry.file_name());
            // Not following symlinks: a link is copied as a link.
            let Some(metadata) = self.readable(&archived, entry.metadata()) else {
                continue;
            };
            let kind = metadata.file_type();
            if kind.is_dir() {
                self.folder(&archived, &metadata)?;
                match fs::read_dir(&path) {
                    Ok(listing) => open.push((listing, archived)),
                    Err(e) => self.skip(
                        &archived,
                        SkipKind::Unreadable,
                        format!("its contents could not be read ({e}); it was copied empty"),
                    ),
                }
            } else if kind.is_file() {
                self.file(&path, &archived, Symlinks::Refuse)?;
            } else if kind.is_symlink() {
                self.symlink(&path, &archived, &metadata)?;
            } else {
                let (kind, reason) = special(&metadata);
                self.skip(&archived, kind, reason.to_string());
            }
        }
        Ok(())
    }

    fn folder(&mut self, archived: &Path, metadata: &Metadata) -> Result<(), ArchiveError> {
        let mut header = header(tar::EntryType::Directory, metadata, 0);
        self.builder
            .append_data(&mut header, archived, io::empty())
            .map_err(unsent)?;
        self.progress.add_folder();
        Ok(())
    }

    /// Packs the file at `path`, as found when it was listed: a regular file
    /// (`symlinks` says whether a symlink there is followed). What is there
    /// when it is opened is checked again, on the open handle, so a pipe
    /// swapped in meanwhile is skipped instead of blocking the walk forever.
    fn file(
        &mut self,
        path: &Path,
        archived: &Path,
        symlinks: Symlinks,
    ) -> Result<(), ArchiveError> {
        let opened = open_regular(path, symlinks).map_err(io::Error::from);
        let Some(file) = self.readable(archived, opened) else {
            return Ok(());
        };
        let Some(metadata) = self.readable(archived, file.metadata()) else {
            return Ok(());
        };
        let size = metadata.len();
        let mut header = header(tar::EntryType::Regular, &metadata, size);
        let read_error = RefCell::new(None);
        let data = Exactly {
            inner: BufReader::with_capacity(CHUNK_BYTES, file),
            left: size,
            progress: self.progress,
            error: &read_error,
        };
        let appended = self.builder.append_data(&mut header, archived, data);
        if let Err(e) = appended {
            return Err(match read_error.into_inner() {
                Some(read) => self.failed(path, "read", read),
                None => unsent(e),
            });
        }
        self.progress.add_file();
        Ok(())
    }

    fn symlink(
        &mut self,
        path: &Path,
        archived: &Path,
        metadata: &Metadata,
    ) -> Result<(), ArchiveError> {
        let Some(target) = self.readable(archived, fs::read_link(path)) else {
            return Ok(());
        };
        let mut header = header(tar::EntryType::Symlink, metadata, 0);
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

    fn failed(&self, path: &Path, action: &'static str, source: io::Error) -> ArchiveError {
        ArchiveError::failed_at(path, action, source, self.progress.done())
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

fn header(kind: tar::EntryType, metadata: &Metadata, size: u64) -> tar::Header {
    // GNU headers take sizes past 8 GB and long names.
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_size(size);
    header.set_mode(mode(metadata));
    let mtime = metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    header.set_mtime(mtime);
    header
}

#[cfg(unix)]
fn mode(metadata: &Metadata) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()) & 0o7777
}

#[cfg(not(unix))]
fn mode(metadata: &Metadata) -> u32 {
    let base = if metadata.is_dir() { 0o755 } else { 0o644 };
    if metadata.permissions().readonly() {
        base & !0o222
    } else {
        base
    }
}

#[cfg(unix)]
fn special(metadata: &Metadata) -> (SkipKind, &'static str) {
    use std::os::unix::fs::FileTypeExt;
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
fn special(_: &Metadata) -> (SkipKind, &'static str) {
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
    /// The reading error, told apart from the archive's writing errors.
    error: &'a RefCell<Option<io::Error>>,
}

impl<R: Read> Read for Exactly<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 || out.is_empty() {
            return Ok(0);
        }
        let want = out
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = match self.inner.read(&mut out[..want]) {
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file got shorter while it was read",
            )),
            Ok(n) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(e),
            Err(e) => Err(e),
        };
        match n {
            Ok(n) => {
                self.left -= n as u64;
                self.progress.add_bytes(n as u64);
                Ok(n)
            }
            Err(e) => {
                let copy = io::Error::new(e.kind(), e.to_string());
                *self.error.borrow_mut() = Some(e);
                Err(copy)
            }
        }
    }
}
