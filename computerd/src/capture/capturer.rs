//! [`Capturer`]: grabs the root window of one display, through a reused
//! MIT-SHM segment when the server takes one, through plain `GetImage`
//! otherwise.

use super::convert::Rows;
use super::frame::{masked_fingerprint, Frame};
use super::pixels::PixelFormat;
use super::shm::ShmImage;
use super::CaptureError;
use crate::display::Display;
use computer_protocol::Region;
use std::borrow::Cow;
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

    /// The screen now as an RGB frame.
    pub fn grab(&mut self, display: &Display) -> Result<Frame, CaptureError> {
        Ok(self.grab_raw(display)?.to_frame())
    }

    /// The screen now in the server's own pixel layout, unconverted: its
    /// fingerprint alone tells whether anything changed, and it converts
    /// to a frame only when one is shown.
    pub fn grab_raw(&mut self, display: &Display) -> Result<Grab<'_>, CaptureError> {
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
        let in_shm = self.fill_shm(display, &format, width, height)?;
        let data = match (&self.shm, in_shm) {
            (Shm::Ready(image), true) => Cow::Borrowed(image.image()),
            _ => Cow::Owned(grab_plain(display, width, height)?),
        };
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
        Ok(Grab {
            width,
            height,
            data,
            format,
        })
    }

    /// Has the server write the screen into the shared-memory segment;
    /// false when SHM is off (and turns it off when it fails now).
    fn fill_shm(
        &mut self,
        display: &Display,
        format: &PixelFormat,
        width: u16,
        height: u16,
    ) -> Result<bool, CaptureError> {
        let len = format.image_len(width, height);
        if len == 0 {
            return Ok(false);
        }
        let shm = std::mem::replace(&mut self.shm, Shm::Off);
        let attached = match shm {
            Shm::Off => return Ok(false),
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
                return Ok(false);
            }
        };
        match image.get_root(display, width, height) {
            Ok(()) => {
                self.shm = Shm::Ready(image);
                Ok(true)
            }
            Err(ReplyError::X11Error(error)) => {
                let number = display.number;
                tracing::warn!(
                    display = number,
                    "MIT-SHM grab refused ({error:?}); capturing without it"
                );
                image.detach(display);
                Ok(false)
            }
            Err(e) => Err(CaptureError::request(display.number)(e)),
        }
    }
}

/// One grab of the screen in the server's pixel layout (borrowed from the
/// shared-memory segment, which the next grab overwrites).
pub struct Grab<'a> {
    pub width: u16,
    pub height: u16,
    data: Cow<'a, [u8]>,
    format: PixelFormat,
}

impl Grab<'_> {
    /// Tells screens apart like [`Frame::fingerprint`] tells frames apart
    /// (the two are not comparable): a hash of the size and the colour
    /// bits, read straight from the server's pixels when they are 4-byte
    /// words (Xvnc at depth 24), which costs no conversion.
    pub fn fingerprint(&self) -> u64 {
        let (width, height) = (u32::from(self.width), u32::from(self.height));
        match self.format.word_mask(self.width) {
            Some(mask) => {
                let len = self.format.image_len(self.width, self.height);
                masked_fingerprint(width, height, &self.data[..len], mask)
            }
            None => self.to_frame().fingerprint(),
        }
    }

    /// The grab's rows in the server's layout.
    pub fn rows(&self) -> Rows<'_> {
        Rows {
            data: &self.data,
            stride: self.format.stride(self.width),
            format: &self.format,
        }
    }

    /// The grab as packed RGB8.
    pub fn to_frame(&self) -> Frame {
        let (width, height) = (u32::from(self.width), u32::from(self.height));
        let whole = Region {
            x: 0,
            y: 0,
            width,
            height,
        };
        Frame {
            width,
            height,
            rgb: self.rows().to_rgb(whole),
        }
    }
}

/// The screen through a plain `GetImage` reply.
fn grab_plain(display: &Display, width: u16, height: u16) -> Result<Vec<u8>, CaptureError> {
    let reply = display
        .conn
        .get_image(ImageFormat::Z_PIXMAP, display.root, 0, 0, width, height, !0)
        .map_err(CaptureError::send(display.number))?
        .reply()
        .map_err(CaptureError::request(display.number))?;
    Ok(reply.data)
}
