//! [`Pixels`]: what a frame is shaped from, a grab in the server's layout
//! or an RGB frame, and what a grab knows of what was drawn before it.

use super::area::Drawn;
use super::capturer::Grab;
use super::convert::Rows;
use super::frame::Frame;
use super::pixels::PixelFormat;

/// What a frame is shaped from: a grab in the server's layout, or an RGB
/// frame.
pub trait Pixels {
    /// Width and height.
    fn size(&self) -> (u32, u32);
    /// The rows, in their layout.
    fn rows(&self) -> Rows<'_>;
    /// The image itself when it already is an RGB frame.
    fn frame(&self) -> Option<&Frame> {
        None
    }
    /// The grab's number among its capturer's grabs; 0 for anything else.
    fn generation(&self) -> u64 {
        0
    }
    /// What was drawn between grab `earlier` of the same capturer and
    /// this one.
    fn drawn_since(&self, _earlier: u64) -> Drawn {
        Drawn::Unknown
    }
}

impl Pixels for Frame {
    fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    fn rows(&self) -> Rows<'_> {
        Rows {
            data: &self.rgb,
            stride: self.width as usize * 3,
            format: &PixelFormat::RGB8,
        }
    }

    fn frame(&self) -> Option<&Frame> {
        Some(self)
    }
}

impl Pixels for Grab<'_> {
    fn size(&self) -> (u32, u32) {
        (u32::from(self.width), u32::from(self.height))
    }

    fn rows(&self) -> Rows<'_> {
        Grab::rows(self)
    }

    fn generation(&self) -> u64 {
        self.generation
    }

    fn drawn_since(&self, earlier: u64) -> Drawn {
        Grab::drawn_since(self, earlier)
    }
}
