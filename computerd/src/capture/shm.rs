//! A MIT-SHM segment the X server writes screenshots into: a memfd handed
//! to the server with `ShmAttachFd` and mapped here, so a grab copies the
//! image once (server → shared pages) instead of through the socket.

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

/// One attached segment of `len` bytes, mapped read-only here.
pub struct ShmImage {
    /// The server's name for the segment.
    seg: shm::Seg,
    /// Start of our mapping of the segment.
    map: NonNull<u8>,
    /// Size of the segment and of the mapping.
    len: usize,
    /// Bytes the server wrote at the last grab.
    filled: usize,
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

    /// Creates a `len`-byte segment and attaches it to the server.
    pub fn create(display: &Display, len: usize) -> Result<ShmImage, ShmError> {
        let fd = memfd(c"computerd-capture")?;
        let file = File::from(fd);
        file.set_len(len as u64)?;
        // SAFETY: mapping a file we own, at a size it was just set to; the
        // result is checked before use and unmapped in Drop.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
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
        let mut image = ShmImage {
            seg: 0,
            map,
            len,
            filled: 0,
        };
        image.seg = display.conn.generate_id()?;
        // The server writes the image, so it must not attach read-only. The fd
        // is sent and closed; our mapping keeps the memory alive.
        shm::attach_fd(&display.conn, image.seg, OwnedFd::from(file), false)?.check()?;
        Ok(image)
    }

    /// Size of the segment in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Has the server write the `width` x `height` ZPixmap of the root window
    /// into the segment; [`ShmImage::image`] then reads it.
    pub fn get_root(
        &mut self,
        display: &Display,
        width: u16,
        height: u16,
    ) -> Result<(), ReplyError> {
        self.filled = 0;
        let reply = shm::get_image(
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
        self.filled = (reply.size as usize).min(self.len);
        Ok(())
    }

    /// The bytes the last [`ShmImage::get_root`] had the server write.
    pub fn image(&self) -> &[u8] {
        // SAFETY: the mapping is `len` bytes, `filled` at most that, and it
        // lives as long as `self`. The server finished writing before it
        // sent the reply, and does not write again until the next
        // `get_root`, which needs `&mut self` and so waits for this borrow.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr(), self.filled) }
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
        // SAFETY: `map` came from mmap with exactly `len` bytes and no slice
        // of it outlives `&self`.
        unsafe {
            libc::munmap(self.map.as_ptr().cast(), self.len);
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
