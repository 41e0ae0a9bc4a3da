//! [`Capturer`]: grabs the root window of one display, through a reused
//! MIT-SHM segment when the server takes one, through plain `GetImage`
//! otherwise.

use super::frame::Frame;
use super::pixels::PixelFormat;
use super::shm::ShmImage;
use super::CaptureError;
use crate::display::Display;
use x11rb::errors::ReplyError;
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat};

/// Grabs frames of one display, reusing a shared-memory segment when MIT-SHM
/// works. Keep one per display connection: the segment stays attached to
/// that connection until it closes.
pub struct Capturer {
    /// Pixel layout of the root window; read from the setup on first grab.
    format: Option<PixelFormat>,
    /// Whether grabs go through shared memory.
    shm: Shm,
}

enum Shm {
    /// Not tried yet: the first grab attaches a segment.
    Untried,
    /// Attached, sized for the last grab.
    Ready(ShmImage),
    /// Unavailable (remote connection, old server, refused): plain
    /// `GetImage` from now on.
    Off,
}

impl Capturer {
    pub fn new(_display: &Display) -> Capturer {
        Capturer {
            format: None,
            shm: Shm::Untried,
        }
    }

    /// A capturer that never uses shared memory; for comparing both paths.
    pub fn without_shm(_display: &Display) -> Capturer {
        Capturer {
            format: None,
            shm: Shm::Off,
        }
    }

    /// True when the last grab went through a shared-memory segment.
    pub fn uses_shm(&self) -> bool {
        matches!(self.shm, Shm::Ready(_))
    }

    pub fn grab(&mut self, display: &Display) -> Result<Frame, CaptureError> {
        let format = match &self.format {
            Some(format) => format.clone(),
            None => {
                let format = PixelFormat::of_root(display)?;
                self.format = Some(format.clone());
                format
            }
        };
        // Asked each time rather than taken from `display`: RandR may have
        // resized the screen since the connection was made.
        let geometry = display
            .conn
            .get_geometry(display.root)
            .map_err(CaptureError::send(display.number))?
            .reply()
            .map_err(CaptureError::request(display.number))?;
        let (width, height) = (geometry.width, geometry.height);
        let rgb = match self.grab_shm(display, &format, width, height)? {
            Some(rgb) => rgb,
            None => grab_plain(display, &format, width, height)?,
        };
        Ok(Frame {
            width: u32::from(width),
            height: u32::from(height),
            rgb,
        })
    }

    /// The frame through shared memory, or `None` when SHM is off (and
    /// turns it off when it fails now).
    fn grab_shm(
        &mut self,
        display: &Display,
        format: &PixelFormat,
        width: u16,
        height: u16,
    ) -> Result<Option<Vec<u8>>, CaptureError> {
        let len = format.image_len(width, height);
        if len == 0 {
            return Ok(None);
        }
        let shm = std::mem::replace(&mut self.shm, Shm::Off);
        let attached = match shm {
            Shm::Off => return Ok(None),
            Shm::Ready(image) if image.len() == len => Ok(image),
            Shm::Ready(image) => {
                image.detach(display);
                ShmImage::create(display, len)
            }
            Shm::Untried => {
                ShmImage::supported(display).and_then(|()| ShmImage::create(display, len))
            }
        };
        let mut image = match attached {
            Ok(image) => image,
            Err(reason) => {
                let number = display.number;
                tracing::info!(display = number, "capture without MIT-SHM: {reason}");
                return Ok(None);
            }
        };
        match image.get_root(display, width, height) {
            Ok(bytes) => {
                let rgb = checked(display, format, bytes, width, height)?;
                self.shm = Shm::Ready(image);
                Ok(Some(rgb))
            }
            Err(ReplyError::X11Error(error)) => {
                let number = display.number;
                tracing::warn!(
                    display = number,
                    "MIT-SHM grab refused ({error:?}); capturing without it"
                );
                image.detach(display);
                Ok(None)
            }
            Err(e) => Err(CaptureError::request(display.number)(e)),
        }
    }
}

fn grab_plain(
    display: &Display,
    format: &PixelFormat,
    width: u16,
    height: u16,
) -> Result<Vec<u8>, CaptureError> {
    let reply = display
        .conn
        .get_image(ImageFormat::Z_PIXMAP, display.root, 0, 0, width, height, !0)
        .map_err(CaptureError::send(display.number))?
        .reply()
        .map_err(CaptureError::request(display.number))?;
    checked(display, format, &reply.data, width, height)
}

/// RGB8 of `data`, once it is known to hold the whole image.
fn checked(
    display: &Display,
    format: &PixelFormat,
    data: &[u8],
    width: u16,
    height: u16,
) -> Result<Vec<u8>, CaptureError> {
    let expected = format.image_len(width, height);
    if data.len() < expected {
        return Err(CaptureError::ShortImage {
            display: display.number,
            width,
            height,
            got: data.len(),
            expected,
        });
    }
    Ok(format.to_rgb(data, width, height))
}
