//! The layout of the root window's pixels in a ZPixmap image, read from the
//! connection setup; `convert` turns such rows into packed RGB8.

use super::CaptureError;
use crate::display::Display;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ImageOrder, VisualClass};

/// How one ZPixmap pixel of the root window is laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PixelFormat {
    /// Bytes one pixel takes (bits per pixel / 8): 2, 3 or 4.
    bytes_per_pixel: usize,
    /// Rows are padded to this many bits.
    scanline_pad: u32,
    /// Image byte order: multi-byte pixels are stored least significant
    /// byte first unless this is set.
    msb_first: bool,
    red: Channel,
    green: Channel,
    blue: Channel,
}

/// Where one colour sits in a pixel value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Channel {
    shift: u32,
    bits: u32,
}

impl Channel {
    fn from_mask(mask: u32) -> Channel {
        Channel {
            shift: mask.trailing_zeros() % 32,
            bits: mask.count_ones(),
        }
    }

    /// The byte this channel fills alone in an `n`-byte pixel, when it
    /// does.
    fn whole_byte(self, msb_first: bool, n: usize) -> Option<usize> {
        if self.bits != 8 || !self.shift.is_multiple_of(8) {
            return None;
        }
        let lsb_index = (self.shift / 8) as usize;
        if lsb_index >= n {
            return None;
        }
        Some(if msb_first {
            n - 1 - lsb_index
        } else {
            lsb_index
        })
    }

    /// The bits of a pixel value this channel takes.
    fn mask(self) -> u32 {
        let ones = 1u32.checked_shl(self.bits).map_or(u32::MAX, |v| v - 1);
        ones.checked_shl(self.shift).unwrap_or(0)
    }

    /// This channel of `value`, scaled to 0..=255.
    fn extract(self, value: u32) -> u8 {
        if self.bits == 0 {
            return 0;
        }
        let raw = (value >> self.shift) & (u32::MAX >> (32 - self.bits));
        match self.bits {
            8 => raw as u8,
            b if b > 8 => (raw >> (b - 8)) as u8,
            b => ((raw * 255 + ((1 << b) - 1) / 2) / ((1 << b) - 1)) as u8,
        }
    }
}

impl PixelFormat {
    /// The layout of `display`'s root window, from the connection setup.
    pub fn of_root(display: &Display) -> Result<PixelFormat, CaptureError> {
        let setup = display.conn.setup();
        let screen = setup
            .roots
            .iter()
            .find(|s| s.root == display.root)
            .unwrap_or(&setup.roots[0]);
        let depth = screen.root_depth;
        let unsupported = |bits_per_pixel: u8, why: &'static str| CaptureError::UnsupportedFormat {
            display: display.number,
            depth,
            bits_per_pixel,
            why,
        };
        let format = setup
            .pixmap_formats
            .iter()
            .find(|f| f.depth == depth)
            .ok_or_else(|| unsupported(0, "no pixmap format for the root depth"))?;
        let visual = screen
            .allowed_depths
            .iter()
            .flat_map(|d| d.visuals.iter())
            .find(|v| v.visual_id == screen.root_visual)
            .ok_or_else(|| unsupported(format.bits_per_pixel, "the root visual is not listed"))?;
        if visual.class != VisualClass::TRUE_COLOR && visual.class != VisualClass::DIRECT_COLOR {
            return Err(unsupported(
                format.bits_per_pixel,
                "the root visual is not TrueColor",
            ));
        }
        if !matches!(format.bits_per_pixel, 16 | 24 | 32) {
            return Err(unsupported(
                format.bits_per_pixel,
                "pixels are not 16, 24 or 32 bits",
            ));
        }
        Ok(PixelFormat {
            bytes_per_pixel: usize::from(format.bits_per_pixel / 8),
            scanline_pad: u32::from(format.scanline_pad),
            msb_first: setup.image_byte_order == ImageOrder::MSB_FIRST,
            red: Channel::from_mask(visual.red_mask),
            green: Channel::from_mask(visual.green_mask),
            blue: Channel::from_mask(visual.blue_mask),
        })
    }

    /// Bytes from one row's start to the next.
    pub fn stride(&self, width: u16) -> usize {
        let bits = usize::from(width) * self.bytes_per_pixel * 8;
        let pad = self.scanline_pad.max(8) as usize;
        bits.div_ceil(pad) * pad / 8
    }

    /// The colour bits of two neighbouring pixels as one little-endian
    /// 8-byte word of the image, when pixels are 4 bytes and rows of
    /// `width` carry no padding; `None` otherwise (then only the converted
    /// frame can be hashed).
    pub fn word_mask(&self, width: u16) -> Option<u64> {
        if self.bytes_per_pixel != 4 || self.stride(width) != usize::from(width) * 4 {
            return None;
        }
        let value = self.red.mask() | self.green.mask() | self.blue.mask();
        // In memory a pixel is its value's bytes, lowest first unless the
        // image is MSB first.
        let in_memory = if self.msb_first {
            value.swap_bytes()
        } else {
            value
        };
        Some(u64::from(in_memory) | u64::from(in_memory) << 32)
    }

    /// Bytes of a whole `width` x `height` image.
    pub fn image_len(&self, width: u16, height: u16) -> usize {
        self.stride(width) * usize::from(height)
    }

    /// Packed RGB8 frames as a source: three bytes a pixel, red first,
    /// rows unpadded.
    pub const RGB8: PixelFormat = PixelFormat {
        bytes_per_pixel: 3,
        scanline_pad: 8,
        msb_first: false,
        red: Channel { shift: 0, bits: 8 },
        green: Channel { shift: 8, bits: 8 },
        blue: Channel { shift: 16, bits: 8 },
    };

    /// Bytes one pixel takes.
    pub fn bytes_per_pixel(&self) -> usize {
        self.bytes_per_pixel
    }

    /// How rows of this layout are read, fastest first.
    pub fn layout(&self) -> Layout {
        let n = self.bytes_per_pixel;
        let at = |c: Channel| c.whole_byte(self.msb_first, n);
        match (at(self.red), at(self.green), at(self.blue)) {
            // Xvnc at depth 24 on a little-endian machine.
            (Some(2), Some(1), Some(0)) if n == 4 => Layout::Bgrx,
            (Some(r), Some(g), Some(b)) => Layout::WholeBytes { at: [r, g, b] },
            _ => Layout::Packed,
        }
    }

    /// The red, green and blue of one pixel's bytes.
    pub fn rgb_of(&self, px: &[u8]) -> [u8; 3] {
        let value = self.pixel_value(px);
        [
            self.red.extract(value),
            self.green.extract(value),
            self.blue.extract(value),
        ]
    }

    fn pixel_value(&self, px: &[u8]) -> u32 {
        if self.msb_first {
            px.iter().fold(0, |v, &b| (v << 8) | u32::from(b))
        } else {
            px.iter().rev().fold(0, |v, &b| (v << 8) | u32::from(b))
        }
    }
}

/// How a row's pixels are read: Xvnc's fixed byte order (which has vector
/// loops), whole bytes at known places, or bit fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Four bytes a pixel: blue, green, red, padding.
    Bgrx,
    /// Each colour is one byte of the pixel, at these places.
    WholeBytes { at: [usize; 3] },
    /// Anything else (16-bit pixels, odd masks): read bit by bit.
    Packed,
}

#[cfg(test)]
impl PixelFormat {
    /// A layout for tests: rows padded to 32 bits.
    pub fn test_format(bytes_per_pixel: usize, msb_first: bool, masks: [u32; 3]) -> PixelFormat {
        PixelFormat {
            bytes_per_pixel,
            scanline_pad: 32,
            msb_first,
            red: Channel::from_mask(masks[0]),
            green: Channel::from_mask(masks[1]),
            blue: Channel::from_mask(masks[2]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RGB888: [u32; 3] = [0xff_0000, 0x00_ff00, 0x00_00ff];

    #[test]
    fn layouts_are_told_by_where_the_colour_bytes_sit() {
        let f = PixelFormat::test_format;
        assert_eq!(f(4, false, RGB888).layout(), Layout::Bgrx);
        assert_eq!(
            f(4, true, RGB888).layout(),
            Layout::WholeBytes { at: [1, 2, 3] }
        );
        assert_eq!(
            f(3, false, RGB888).layout(),
            Layout::WholeBytes { at: [2, 1, 0] }
        );
        assert_eq!(
            f(2, false, [0xf800, 0x07e0, 0x001f]).layout(),
            Layout::Packed
        );
    }

    #[test]
    fn the_word_mask_keeps_colour_bits_and_drops_the_padding_byte() {
        let little = PixelFormat::test_format(4, false, RGB888);
        assert_eq!(little.word_mask(7), Some(0x00ff_ffff_00ff_ffff));
        // MSB first: the padding byte comes first in memory.
        let big = PixelFormat::test_format(4, true, RGB888);
        assert_eq!(big.word_mask(7), Some(0xffff_ff00_ffff_ff00));
        // 16-bit pixels are hashed once converted.
        let rgb565 = PixelFormat::test_format(2, false, [0xf800, 0x07e0, 0x001f]);
        assert_eq!(rgb565.word_mask(8), None);
    }
}
