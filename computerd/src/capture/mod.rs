//! Screen capture: the root window of one display as packed RGB8, its PNG,
//! and the facts an observation reports beside the image.
//!
//! # Layout
//! - `capturer`: [`Capturer`] grabs the root window, through MIT-SHM when
//!   the server allows it (`shm`) and plain `GetImage` otherwise. The
//!   segment is a copy of the screen that each grab updates with the boxes
//!   X DAMAGE says were drawn (`damage`, `area`); the fingerprint is kept
//!   as hashes of tiles (`tile_hashes`).
//! - `pixels`: the server's pixel layout.
//! - `convert`: its rows to RGB8, a region at its own size or halved
//!   (2x2 means) for frames shown at half size or less.
//! - `frame`: [`Frame`], one screenshot, and its fingerprint.
//! - `encode`: PNG encoding, [`encode_png`]: indexed when the frame has
//!   at most 256 colours (`palette`), or a few hundred whose rare shades
//!   merge unseen (`shades`), RGB otherwise; rows filtered
//!   (`filter`) and deflated in strips on all cores (`strips`).
//! - `shape`: the frame an agent gets: region, scaled to its bounds,
//!   PNG or JPEG, under 1 MB ([`shape`](mod@shape)).
//! - `source`: [`Pixels`], what shaping reads: a grab or an RGB frame.
//! - `rescale`: the last scaled frame, kept ([`Rescaler`]): the next grab
//!   redoes only the source rows and scaled pixels of what was drawn.
//! - `cursor`: where the pointer is, for an observation.
//! - `bands`: how many bands of rows big frames are cut into, one per
//!   core, for converting, scaling and deflating.
//!
//! A grab flows: root geometry and drawn boxes → SHM copy updated (or a
//! `GetImage` reply) → [`Grab`] (the server's pixels; its fingerprint
//! tells a changed screen without converting, and it says what was drawn
//! since an earlier grab) → [`shape`](mod@shape): the region converted (`convert`),
//! halved first when shown at half size or less, scaled (in part, when a
//! kept frame allows), encoded.

mod area;
mod bands;
#[cfg(target_arch = "x86_64")]
mod bgrx_simd;
mod capturer;
mod convert;
mod cursor;
mod damage;
mod encode;
mod filter;
mod frame;
mod palette;
mod pixels;
mod rescale;
mod shades;
mod shape;
mod shm;
mod source;
mod strips;
mod tile_hashes;

pub use area::{Area, Drawn};
pub use capturer::{Capturer, Grab};
pub use convert::Rows;
pub use cursor::cursor_position;
pub use encode::{encode_png, encode_png_with, PngSettings};
pub use filter::{FilterChoice, RowFilter};
pub use frame::Frame;
pub use palette::{index_colours, index_shades, Indexed};
pub use rescale::Rescaler;
pub use shades::{MOVED_SHARE_MAX, SHADE_MOVE_MAX};
pub use shape::{check_region, fitted_size, shape, shape_kept, Shaped};
pub use source::Pixels;

use x11rb::errors::{ConnectionError, ReplyError};

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("capture of display :{display} failed: the X request was refused or the connection broke ({source}); if Xvnc is gone, end the session and start a new one")]
    Request {
        display: u32,
        #[source]
        source: ReplyError,
    },
    #[error("capture of display :{display} failed: display uses a {depth}-bit {bits_per_pixel} bpp layout capture cannot read ({why}); run Xvnc with `-depth 24`")]
    UnsupportedFormat {
        display: u32,
        depth: u8,
        bits_per_pixel: u8,
        why: &'static str,
    },
    #[error("capture of display :{display} failed: the server sent {got} bytes for a {width}x{height} image, expected {expected}")]
    ShortImage {
        display: u32,
        width: u16,
        height: u16,
        got: usize,
        expected: usize,
    },
    #[error("PNG encoding of a {width}x{height} frame failed: {source}")]
    Encode {
        width: u32,
        height: u32,
        #[source]
        source: std::io::Error,
    },
    #[error("shaping a {width}x{height} frame failed: {source}")]
    Scale {
        width: u32,
        height: u32,
        #[source]
        source: ScaleError,
    },
}

/// Why scaling a frame, or encoding it as JPEG, failed: what the resizer or
/// the encoder said.
#[derive(Debug, thiserror::Error)]
pub enum ScaleError {
    #[error("a pixel buffer does not match its size: {0}")]
    Buffer(#[from] fast_image_resize::ImageBufferError),
    #[error("the resizer refused the frame: {0}")]
    Resize(#[from] fast_image_resize::ResizeError),
    #[error("a thread scaling a band of rows panicked")]
    BandPanicked,
    #[error("a JPEG's sides are at most 65535 pixels")]
    JpegTooLarge,
    #[error("JPEG encoding failed: {0}")]
    Jpeg(#[from] jpeg_encoder::EncodingError),
}

impl CaptureError {
    /// Wraps an X error with the display it happened on.
    pub(crate) fn request(display: u32) -> impl Fn(ReplyError) -> CaptureError {
        move |source| CaptureError::Request { display, source }
    }

    /// Same, for errors that happen while sending.
    pub(crate) fn send(display: u32) -> impl Fn(ConnectionError) -> CaptureError {
        move |source| CaptureError::Request {
            display,
            source: source.into(),
        }
    }
}
