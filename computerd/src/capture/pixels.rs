//! The layout of the root window's pixels in a ZPixmap image, read from the
//! connection setup, and its conversion to packed RGB8.

use super::CaptureError;
use super::bands::band_count;
use crate::display::Display;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ImageOrder, VisualClass};

/// Below this many pixels a frame converts on one thread: a thread costs
/// more than it saves (1280x800 is about half a millisecond on one core).
const PARALLEL_MIN_PIXELS: usize = 2_000_000;

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

    /// The byte this channel fills alone in a 4-byte pixel, when it does.
    fn whole_byte(self, msb_first: bool) -> Option<usize> {
        if self.bits != 8 || !self.shift.is_multiple_of(8) {
            return None;
        }
        let lsb_index = (self.shift / 8) as usize;
        Some(if msb_first { 3 - lsb_index } else { lsb_index })
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

    /// Converts a ZPixmap image to packed RGB8 rows. `data` holds at least
    /// [`PixelFormat::image_len`] bytes.
    pub fn to_rgb(&self, data: &[u8], width: u16, height: u16) -> Vec<u8> {
        let (w, h) = (usize::from(width), usize::from(height));
        let stride = self.stride(width);
        let mut rgb = vec![0u8; w * h * 3];
        if w == 0 || h == 0 {
            return rgb;
        }
        // A 4K screen is 33 MB to read: big frames convert in bands of
        // rows on all cores.
        let bands = band_count(w * h, PARALLEL_MIN_PIXELS, h);
        if bands == 1 {
            self.convert_rows(data, &mut rgb, w, stride);
            return rgb;
        }
        let band_rows = h.div_ceil(bands);
        std::thread::scope(|scope| {
            let mut bands = rgb
                .chunks_mut(band_rows * w * 3)
                .zip(data.chunks(band_rows * stride));
            let first = bands.next();
            for (out, src) in bands {
                scope.spawn(move || self.convert_rows(src, out, w, stride));
            }
            if let Some((out, src)) = first {
                self.convert_rows(src, out, w, stride);
            }
        });
        rgb
    }

    /// Converts the rows of `data` (each `stride` bytes) into `rgb` (each
    /// `w` pixels), as many as `rgb` holds.
    fn convert_rows(&self, data: &[u8], rgb: &mut [u8], w: usize, stride: usize) {
        let rows = data.chunks(stride).zip(rgb.chunks_exact_mut(w * 3));
        let bytes = (
            self.red.whole_byte(self.msb_first),
            self.green.whole_byte(self.msb_first),
            self.blue.whole_byte(self.msb_first),
        );
        match (self.bytes_per_pixel, bytes) {
            // Xvnc at depth 24 on a little-endian machine: BGRX in memory.
            // Fixed byte positions let the loop vectorize.
            (4, (Some(2), Some(1), Some(0))) => {
                for (src, dst) in rows {
                    for (px, out) in src[..w * 4].chunks_exact(4).zip(dst.chunks_exact_mut(3)) {
                        out.copy_from_slice(&[px[2], px[1], px[0]]);
                    }
                }
            }
            // Other 32-bit pixels whose colours are whole bytes.
            (4, (Some(r), Some(g), Some(b))) => {
                for (src, dst) in rows {
                    for (px, out) in src[..w * 4].chunks_exact(4).zip(dst.chunks_exact_mut(3)) {
                        out[0] = px[r];
                        out[1] = px[g];
                        out[2] = px[b];
                    }
                }
            }
            _ => {
                let n = self.bytes_per_pixel;
                for (src, dst) in rows {
                    for (px, out) in src[..w * n].chunks_exact(n).zip(dst.chunks_exact_mut(3)) {
                        let value = self.pixel_value(px);
                        out[0] = self.red.extract(value);
                        out[1] = self.green.extract(value);
                        out[2] = self.blue.extract(value);
                    }
                }
            }
        }
    }

    fn pixel_value(&self, px: &[u8]) -> u32 {
        if self.msb_first {
            px.iter().fold(0, |v, &b| (v << 8) | u32::from(b))
        } else {
            px.iter().rev().fold(0, |v, &b| (v << 8) | u32::from(b))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(bytes_per_pixel: usize, msb_first: bool, masks: [u32; 3]) -> PixelFormat {
        PixelFormat {
            bytes_per_pixel,
            scanline_pad: 32,
            msb_first,
            red: Channel::from_mask(masks[0]),
            green: Channel::from_mask(masks[1]),
            blue: Channel::from_mask(masks[2]),
        }
    }

    const RGB888: [u32; 3] = [0xff_0000, 0x00_ff00, 0x00_00ff];

    #[test]
    fn bgrx_lsb_first_becomes_rgb() {
        let f = format(4, false, RGB888);
        // Two pixels: 0x123456 and 0xabcdef, stored B G R X.
        let data = [0x56, 0x34, 0x12, 0, 0xef, 0xcd, 0xab, 0];
        assert_eq!(
            f.to_rgb(&data, 2, 1),
            vec![0x12, 0x34, 0x56, 0xab, 0xcd, 0xef]
        );
    }

    #[test]
    fn msb_first_reads_bytes_the_other_way() {
        let f = format(4, true, RGB888);
        let data = [0, 0x12, 0x34, 0x56];
        assert_eq!(f.to_rgb(&data, 1, 1), vec![0x12, 0x34, 0x56]);
    }

    #[test]
    fn rgb565_scales_to_full_range() {
        let f = format(2, false, [0xf800, 0x07e0, 0x001f]);
        // White, then pure red.
        let data = [0xff, 0xff, 0x00, 0xf8];
        assert_eq!(f.to_rgb(&data, 2, 1), vec![255, 255, 255, 255, 0, 0]);
    }

    #[test]
    fn rows_skip_their_padding() {
        // 24 bpp, 1 pixel wide: 3 bytes of pixel, padded to 4.
        let f = format(3, false, RGB888);
        assert_eq!(f.stride(1), 4);
        let data = [0x03, 0x02, 0x01, 0xee, 0x06, 0x05, 0x04, 0xee];
        assert_eq!(f.to_rgb(&data, 1, 2), vec![1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn the_word_mask_keeps_colour_bits_and_drops_the_padding_byte() {
        let little = format(4, false, RGB888);
        assert_eq!(little.word_mask(7), Some(0x00ff_ffff_00ff_ffff));
        // MSB first: the padding byte comes first in memory.
        let big = format(4, true, RGB888);
        assert_eq!(big.word_mask(7), Some(0xffff_ff00_ffff_ff00));
        // 16-bit pixels are hashed once converted.
        assert_eq!(format(2, false, [0xf800, 0x07e0, 0x001f]).word_mask(8), None);
    }

    #[test]
    fn a_big_frame_converts_in_bands_to_the_same_pixels() {
        // 2000x1001: over the threshold, and rows that do not split evenly.
        let (w, h) = (2000u16, 1001u16);
        let data: Vec<u8> = (0..usize::from(w) * usize::from(h) * 4)
            .map(|i| (i * 31 + i / 4099) as u8)
            .collect();
        for f in [format(4, false, RGB888), format(4, false, [0xff, 0xff00, 0xff_0000])] {
            let rgb = f.to_rgb(&data, w, h);
            let mut one_band = vec![0u8; rgb.len()];
            f.convert_rows(&data, &mut one_band, usize::from(w), f.stride(w));
            assert!(rgb == one_band, "bands differ from one pass");
            // Spot check: the last pixel of the last row.
            let at = data.len() - 4;
            let expected = if f.red.shift == 16 {
                [data[at + 2], data[at + 1], data[at]]
            } else {
                [data[at], data[at + 1], data[at + 2]]
            };
            assert_eq!(rgb[rgb.len() - 3..], expected);
        }
    }
}
