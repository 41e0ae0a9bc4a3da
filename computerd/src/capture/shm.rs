//! A MIT-SHM segment the X server writes screenshots into: a memfd handed
//! to the server with `ShmAttachFd` and mapped here, so a grab copies the
//! image once (server → shared pages) instead of through the socket.
//!
//! The segment holds a copy of the screen, then as much room again: a
//! grab of a few boxes has the server write them packed into that room,
//! and copies their rows into place in the copy (a box's rows are not
//! contiguous in a screen-wide image, and `ShmGetImage` writes them so).

use super::area::Area;
use crate::display::Display;
use std::ffi::CStr;
use std::fs::File;
use std::os::fd::{FromRawFd, OwnedFd};
use std::ptr::NonNull;
use x11rb::connection::{Connection, RequestConnection};
use x11rb::errors::{ConnectionError, ReplyError, ReplyOrIdError};
use x11rb::protocol::shm;
use x11rb::protocol::xproto::ImageFormat;

/// Why SHM could not be used; capture then falls back to plain `GetImage`.
#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    #[error("the server has no MIT-SHM extension")]
    Missing,
    #[error(
        "the server's MIT-SHM is version {major}.{minor}; passing a file descriptor needs 1.2"
    )]
    TooOld { major: u16, minor: u16 },
    #[error("creating the shared memory failed: {0}")]
    Memory(#[from] std::io::Error),
    #[error("the server refused the shared memory: {0}")]
    Refused(#[from] ReplyError),
}

impl From<ConnectionError> for ShmError {
    fn from(e: ConnectionError) -> ShmError {
        ShmError::Refused(e.into())
    }
}

impl From<ReplyOrIdError> for ShmError {
    fn from(e: ReplyOrIdError) -> ShmError {
        match e {
            ReplyOrIdError::ConnectionError(e) => e.into(),
            ReplyOrIdError::X11Error(e) => ShmError::Refused(e.into()),
            ReplyOrIdError::IdsExhausted => ShmError::Refused(ConnectionError::UnknownError.into()),
        }
    }
}

/// One attached segment: a screen image of `len` bytes, then `len` bytes
/// of room for boxes read from the server.
pub struct ShmImage {
    /// The server's name for the segment.
    seg: shm::Seg,
    /// Start of our mapping of the segment.
    map: NonNull<u8>,
    /// Size of the screen image: half the segment and of the mapping.
    len: usize,
}

// SAFETY: the mapping belongs to this value alone (nothing else holds the
// pointer), so moving it to another thread is as safe as moving a Vec. The
// screen's X state lives in a Mutex used from blocking tasks, hence Send.
unsafe impl Send for ShmImage {}

impl ShmImage {
    /// Checks that the server can take a file descriptor for SHM (1.2+).
    pub fn supported(display: &Display) -> Result<(), ShmError> {
        if display
            .conn
            .extension_information(shm::X11_EXTENSION_NAME)?
            .is_none()
        {
            return Err(ShmError::Missing);
        }
        let version = shm::query_version(&display.conn)?.reply()?;
        if (version.major_version, version.minor_version) < (1, 2) {
            return Err(ShmError::TooOld {
                major: version.major_version,
                minor: version.minor_version,
            });
        }
        Ok(())
    }

    /// Creates a segment for a `len`-byte screen image and attaches it to
    /// the server. The room for boxes takes memory only once used.
    pub fn create(display: &Display, len: usize) -> Result<ShmImage, ShmError> {
        let fd = memfd(c"computerd-capture")?;
        let file = File::from(fd);
        file.set_len(2 * len as u64)?;
        // SAFETY: mapping a file we own, at a size it was just set to; the
        // result is checked before use and unmapped in Drop.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                std::os::fd::AsRawFd::as_raw_fd(&file),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error().into());
        }
        let map = NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| std::io::Error::other("mmap returned null"))?;
        // Owned from here, so an error below still unmaps it.
        let mut image = ShmImage { seg: 0, map, len };
        image.seg = display.conn.generate_id()?;
        // The server writes the image, so it must not attach read-only. The fd
        // is sent and closed; our mapping keeps the memory alive.
        shm::attach_fd(&display.conn, image.seg, OwnedFd::from(file), false)?.check()?;
        Ok(image)
    }

    /// Size of the screen image in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Has the server write the whole `width` x `height` ZPixmap of the
    /// root window as the screen image.
    pub fn read_whole(
        &mut self,
        display: &Display,
        width: u16,
        height: u16,
    ) -> Result<(), ReplyError> {
        shm::get_image(
            &display.conn,
            display.root,
            0,
            0,
            width,
            height,
            !0,
            ImageFormat::Z_PIXMAP.into(),
            self.seg,
            0,
        )?
        .reply()?;
        Ok(())
    }

    /// Has the server write `areas` of the root window (4-byte pixels,
    /// rows of `stride` bytes, areas that do not overlap) into the room
    /// after the screen image, all requests sent before any answer is
    /// awaited, then copies their rows into place in the image.
    pub fn read_areas(
        &mut self,
        display: &Display,
        stride: usize,
        areas: &[Area],
    ) -> Result<(), ReplyError> {
        let mut cookies = Vec::with_capacity(areas.len());
        let mut offset = self.len;
        for area in areas {
            let bytes = area.pixels() as usize * 4;
            if offset + bytes > 2 * self.len {
                // Overlapping areas could overflow the room; callers never
                // pass them, and refusing beats writing past the mapping.
                return Err(ConnectionError::UnknownError.into());
            }
            let at = u32::try_from(offset).map_err(|_| ConnectionError::UnknownError)?;
            cookies.push(shm::get_image(
                &display.conn,
                display.root,
                area.x as i16,
                area.y as i16,
                area.width as u16,
                area.height as u16,
                !0,
                ImageFormat::Z_PIXMAP.into(),
                self.seg,
                at,
            )?);
            offset += bytes;
        }
        for cookie in cookies {
            cookie.reply()?;
        }
        // SAFETY: the mapping is `2 * len` bytes, readable and writable,
        // and lives as long as `self`, which this `&mut` borrows alone. The
        // server finished writing before it sent the replies above, and
        // writes again only in a later read, which needs `&mut self`.
        let whole = unsafe { std::slice::from_raw_parts_mut(self.map.as_ptr(), 2 * self.len) };
        let (image, room) = whole.split_at_mut(self.len);
        let mut read = &room[..];
        for area in areas {
            let row = area.width as usize * 4;
            let (boxed, rest) = read.split_at(row * area.height as usize);
            read = rest;
            for (i, src) in boxed.chunks_exact(row).enumerate() {
                let start = (area.y as usize + i) * stride + area.x as usize * 4;
                image[start..start + row].copy_from_slice(src);
            }
        }
        Ok(())
    }

    /// The screen image, as the reads so far have written it.
    pub fn image(&self) -> &[u8] {
        // SAFETY: the mapping is `2 * len` bytes and lives as long as
        // `self`. The server finished writing before it answered the last
        // read, and does not write again until the next one, which needs
        // `&mut self` and so waits for this borrow.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr(), self.len) }
    }

    /// Detaches the segment from the server. Dropping unmaps our side; the
    /// server drops its side by itself when the connection closes.
    pub fn detach(self, display: &Display) {
        if let Ok(cookie) = shm::detach(&display.conn, self.seg) {
            cookie.ignore_error();
        }
    }
}

impl Drop for ShmImage {
    fn drop(&mut self) {
        // SAFETY: `map` came from mmap with exactly `2 * len` bytes and no slice
        // of it outlives `&self`.
        unsafe {
            libc::munmap(self.map.as_ptr().cast(), 2 * self.len);
        }
    }
}

fn memfd(name: &CStr) -> std::io::Result<OwnedFd> {
    // SAFETY: `name` is a valid C string; the result is checked.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
