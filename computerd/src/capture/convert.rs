//! The server's rows to packed RGB8: a region at its own size, or halved
//! on both sides (each pixel the mean of a 2x2 block) when the frame is
//! shown at half size or less, so the scaling filter then reads a quarter
//! of the pixels. Big regions convert in bands of rows on all cores.
//!
//! Xvnc's BGRX rows take SSSE3 loops on x86-64 (`bgrx_simd`) and
//! fixed-layout loops for the rest; other layouts read their bytes or bit
//! fields one pixel at a time.

use super::bands::in_bands;
use super::pixels::{Layout, PixelFormat};
use computer_protocol::Region;

/// Below this many source pixels a region converts on one thread: a thread
/// costs more than it saves (1280x800 takes about 0.35 ms on one core).
const PARALLEL_MIN_PIXELS: usize = 2_000_000;

/// An image in the server's layout: `data` holds rows of `stride` bytes.
#[derive(Clone, Copy)]
pub struct Rows<'a> {
    pub data: &'a [u8],
    pub stride: usize,
    pub format: &'a PixelFormat,
}

impl Rows<'_> {
    /// The pixels of row `y` from column `x` on.
    fn row_from(&self, x: u32, y: u32) -> &[u8] {
        &self.data[y as usize * self.stride + x as usize * self.format.bytes_per_pixel()..]
    }

    /// `region` as packed RGB8, `region.width * 3` bytes a row.
    pub fn to_rgb(&self, region: Region) -> Vec<u8> {
        let w = region.width as usize;
        let mut rgb = vec![0u8; w * region.height as usize * 3];
        let layout = self.format.layout();
        let pixels = w * region.height as usize;
        in_bands(
            &mut rgb,
            w * 3,
            pixels,
            PARALLEL_MIN_PIXELS,
            |first, out| {
                for (i, dst) in out.chunks_exact_mut(w * 3).enumerate() {
                    let src = self.row_from(region.x, region.y + (first + i) as u32);
                    convert_row(self.format, layout, src, dst);
                }
            },
        );
        rgb
    }

    /// `region` halved on both sides as packed RGB8: `(rgb, width,
    /// height)`, each side rounded up (an odd last row or column is
    /// averaged with itself).
    pub fn halved_rgb(&self, region: Region) -> (Vec<u8>, u32, u32) {
        let (w, h) = (region.width.div_ceil(2), region.height.div_ceil(2));
        let mut rgb = vec![0u8; w as usize * h as usize * 3];
        let layout = self.format.layout();
        let pixels = region.width as usize * region.height as usize;
        let last_row = region.y + region.height - 1;
        in_bands(
            &mut rgb,
            w as usize * 3,
            pixels,
            PARALLEL_MIN_PIXELS,
            |first, out| {
                for (i, dst) in out.chunks_exact_mut(w as usize * 3).enumerate() {
                    let top = region.y + 2 * (first + i) as u32;
                    let bottom = (top + 1).min(last_row);
                    halve_row(
                        self.format,
                        layout,
                        self.row_from(region.x, top),
                        self.row_from(region.x, bottom),
                        region.width as usize,
                        dst,
                    );
                }
            },
        );
        (rgb, w, h)
    }
}

/// Converts the pixels of `src` into `dst`, as many as `dst` holds.
fn convert_row(format: &PixelFormat, layout: Layout, src: &[u8], dst: &mut [u8]) {
    let w = dst.len() / 3;
    let n = format.bytes_per_pixel();
    let src = &src[..w * n];
    match layout {
        Layout::Bgrx => bgrx_row(src, dst),
        Layout::WholeBytes { at: [r, g, b] } => {
            for (px, out) in src.chunks_exact(n).zip(dst.chunks_exact_mut(3)) {
                out.copy_from_slice(&[px[r], px[g], px[b]]);
            }
        }
        Layout::Packed => {
            for (px, out) in src.chunks_exact(n).zip(dst.chunks_exact_mut(3)) {
                out.copy_from_slice(&format.rgb_of(px));
            }
        }
    }
}

/// BGRX to RGB: SSSE3 shuffles where the CPU has them, then four pixels
/// at a time as 32-bit words.
fn bgrx_row(src: &[u8], dst: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    let (src, dst) = {
        let done = super::bgrx_simd::bgrx_to_rgb(src, dst);
        (&src[done * 4..], &mut dst[done * 3..])
    };
    bgrx_row_words(src, dst);
}

/// BGRX to RGB four pixels at a time: 16 bytes in, three 32-bit words
/// out, so the loop moves words instead of single bytes.
fn bgrx_row_words(src: &[u8], dst: &mut [u8]) {
    let mut src4 = src.chunks_exact(16);
    let mut dst4 = dst.chunks_exact_mut(12);
    for (s, d) in (&mut src4).zip(&mut dst4) {
        // Each pixel as the word red | green << 8 | blue << 16.
        let px = |i: usize| {
            let word = u32::from_le_bytes([s[4 * i], s[4 * i + 1], s[4 * i + 2], s[4 * i + 3]]);
            word.swap_bytes() >> 8
        };
        let (a, b, c, e) = (px(0), px(1), px(2), px(3));
        d[0..4].copy_from_slice(&(a | b << 24).to_le_bytes());
        d[4..8].copy_from_slice(&(b >> 8 | c << 16).to_le_bytes());
        d[8..12].copy_from_slice(&(c >> 16 | e << 8).to_le_bytes());
    }
    for (px, out) in src4
        .remainder()
        .chunks_exact(4)
        .zip(dst4.into_remainder().chunks_exact_mut(3))
    {
        out.copy_from_slice(&[px[2], px[1], px[0]]);
    }
}

/// One output row of a halved region: each pixel the rounded mean of the
/// 2x2 block at its place in rows `top` and `bottom` (`src_w` pixels each;
/// an odd last column is averaged with itself).
fn halve_row(
    format: &PixelFormat,
    layout: Layout,
    top: &[u8],
    bottom: &[u8],
    src_w: usize,
    dst: &mut [u8],
) {
    let n = format.bytes_per_pixel();
    let pairs = src_w / 2;
    let (top, bottom) = (&top[..src_w * n], &bottom[..src_w * n]);
    let (even, last) = dst.split_at_mut(pairs * 3);
    match layout {
        Layout::Bgrx => {
            #[cfg(target_arch = "x86_64")]
            let (top, bottom, even) = {
                let done = super::bgrx_simd::halve_bgrx_to_rgb(top, bottom, even);
                (&top[done * 8..], &bottom[done * 8..], &mut even[done * 3..])
            };
            for ((t, b), out) in top
                .chunks_exact(8)
                .zip(bottom.chunks_exact(8))
                .zip(even.chunks_exact_mut(3))
            {
                let mean = |c: usize| {
                    let sum = u16::from(t[c])
                        + u16::from(t[c + 4])
                        + u16::from(b[c])
                        + u16::from(b[c + 4]);
                    ((sum + 2) >> 2) as u8
                };
                out.copy_from_slice(&[mean(2), mean(1), mean(0)]);
            }
        }
        _ => {
            for (i, out) in even.chunks_exact_mut(3).enumerate() {
                let at = 2 * i * n;
                out.copy_from_slice(&mean_of(
                    format,
                    layout,
                    [
                        &top[at..at + n],
                        &top[at + n..at + 2 * n],
                        &bottom[at..at + n],
                        &bottom[at + n..at + 2 * n],
                    ],
                ));
            }
        }
    }
    if !last.is_empty() {
        let at = (src_w - 1) * n;
        let (t, b) = (&top[at..at + n], &bottom[at..at + n]);
        last.copy_from_slice(&mean_of(format, layout, [t, t, b, b]));
    }
}

/// The rounded mean colour of four pixels.
fn mean_of(format: &PixelFormat, layout: Layout, pixels: [&[u8]; 4]) -> [u8; 3] {
    let mut sum = [0u16; 3];
    for px in pixels {
        let rgb = match layout {
            Layout::Bgrx => [px[2], px[1], px[0]],
            Layout::WholeBytes { at: [r, g, b] } => [px[r], px[g], px[b]],
            Layout::Packed => format.rgb_of(px),
        };
        for (s, v) in sum.iter_mut().zip(rgb) {
            *s += u16::from(v);
        }
    }
    sum.map(|s| ((s + 2) >> 2) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(width: u32, height: u32) -> Region {
        Region {
            x: 0,
            y: 0,
            width,
            height,
        }
    }

    /// `w`x`h` BGRX pixels with varied values, and the same as RGB.
    fn bgrx_and_rgb(w: usize, h: usize) -> (Vec<u8>, Vec<u8>) {
        let rgb: Vec<u8> = (0..w * h * 3).map(|i| (i * 31 + i / 4099) as u8).collect();
        let bgrx = rgb
            .chunks_exact(3)
            .flat_map(|p| [p[2], p[1], p[0], 0xee])
            .collect();
        (bgrx, rgb)
    }

    #[test]
    fn bgrx_rows_of_every_width_become_rgb() {
        let format = PixelFormat::test_format(4, false, [0xff_0000, 0xff00, 0xff]);
        assert_eq!(format.layout(), Layout::Bgrx);
        for w in [1usize, 3, 4, 5, 17] {
            let (bgrx, rgb) = bgrx_and_rgb(w, 2);
            let rows = Rows {
                data: &bgrx,
                stride: w * 4,
                format: &format,
            };
            assert_eq!(rows.to_rgb(whole(w as u32, 2)), rgb, "width {w}");
        }
    }

    #[test]
    fn the_plain_loops_match_the_vector_ones() {
        // The vector loops serve most of a row on x86-64; the plain ones
        // serve the tail there and everything elsewhere.
        let format = PixelFormat::test_format(4, false, [0xff_0000, 0xff00, 0xff]);
        for w in [2usize, 9, 33] {
            let (bgrx, rgb) = bgrx_and_rgb(w, 2);
            let mut words = vec![0u8; w * 3];
            bgrx_row_words(&bgrx[..w * 4], &mut words);
            assert_eq!(words, rgb[..w * 3], "width {w}");
            let (top, bottom) = bgrx.split_at(w * 4);
            let mut plain = vec![0u8; w.div_ceil(2) * 3];
            halve_row(
                &format,
                Layout::WholeBytes { at: [2, 1, 0] },
                top,
                bottom,
                w,
                &mut plain,
            );
            let mut fast = vec![0u8; w.div_ceil(2) * 3];
            halve_row(&format, Layout::Bgrx, top, bottom, w, &mut fast);
            assert_eq!(plain, fast, "width {w}");
        }
    }

    #[test]
    fn msb_first_reads_bytes_the_other_way() {
        let format = PixelFormat::test_format(4, true, [0xff_0000, 0xff00, 0xff]);
        let data = [0, 0x12, 0x34, 0x56];
        let rows = Rows {
            data: &data,
            stride: 4,
            format: &format,
        };
        assert_eq!(rows.to_rgb(whole(1, 1)), vec![0x12, 0x34, 0x56]);
    }

    #[test]
    fn rgb565_scales_to_full_range() {
        let format = PixelFormat::test_format(2, false, [0xf800, 0x07e0, 0x001f]);
        assert_eq!(format.layout(), Layout::Packed);
        // White, then pure red.
        let data = [0xff, 0xff, 0x00, 0xf8];
        let rows = Rows {
            data: &data,
            stride: 4,
            format: &format,
        };
        assert_eq!(rows.to_rgb(whole(2, 1)), vec![255, 255, 255, 255, 0, 0]);
    }

    #[test]
    fn rows_skip_their_padding_and_a_region_starts_at_its_corner() {
        // 24 bpp, 2 pixels wide: 6 bytes of pixels, padded to 8.
        let format = PixelFormat::test_format(3, false, [0xff_0000, 0xff00, 0xff]);
        assert_eq!(format.stride(2), 8);
        let data = [
            3, 2, 1, 6, 5, 4, 0xee, 0xee, 9, 8, 7, 12, 11, 10, 0xee, 0xee,
        ];
        let rows = Rows {
            data: &data,
            stride: 8,
            format: &format,
        };
        assert_eq!(
            rows.to_rgb(whole(2, 2)),
            vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
        );
        let corner = Region {
            x: 1,
            y: 1,
            width: 1,
            height: 1,
        };
        assert_eq!(rows.to_rgb(corner), vec![10, 11, 12]);
    }

    #[test]
    fn a_big_region_converts_in_bands_to_the_same_pixels() {
        // 2000x1001: over the threshold, and rows that do not split evenly.
        let (bgrx, rgb) = bgrx_and_rgb(2000, 1001);
        let format = PixelFormat::test_format(4, false, [0xff_0000, 0xff00, 0xff]);
        let rows = Rows {
            data: &bgrx,
            stride: 8000,
            format: &format,
        };
        assert!(
            rows.to_rgb(whole(2000, 1001)) == rgb,
            "bands differ from one pass"
        );
    }

    /// The halved region computed the plain way from RGB pixels.
    fn halved_by_hand(rgb: &[u8], w: usize, region: Region) -> Vec<u8> {
        let (x0, y0) = (region.x as usize, region.y as usize);
        let (rw, rh) = (region.width as usize, region.height as usize);
        let mut out = Vec::new();
        for j in 0..rh.div_ceil(2) {
            for i in 0..rw.div_ceil(2) {
                let xs = [x0 + 2 * i, x0 + (2 * i + 1).min(rw - 1)];
                let ys = [y0 + 2 * j, y0 + (2 * j + 1).min(rh - 1)];
                for c in 0..3 {
                    let sum: u16 = ys
                        .iter()
                        .flat_map(|y| xs.iter().map(move |x| u16::from(rgb[(y * w + x) * 3 + c])))
                        .sum();
                    out.push(((sum + 2) >> 2) as u8);
                }
            }
        }
        out
    }

    #[test]
    fn halving_averages_each_2x2_block_in_every_layout() {
        let (w, h) = (2001usize, 1003usize);
        let (bgrx, rgb) = bgrx_and_rgb(w, h);
        let bgrx_format = PixelFormat::test_format(4, false, [0xff_0000, 0xff00, 0xff]);
        let rgb_format = PixelFormat::RGB8;
        assert_eq!(rgb_format.layout(), Layout::WholeBytes { at: [0, 1, 2] });
        let sources = [
            Rows {
                data: &bgrx,
                stride: w * 4,
                format: &bgrx_format,
            },
            Rows {
                data: &rgb,
                stride: w * 3,
                format: &rgb_format,
            },
        ];
        // The whole image (odd sides, banded) and an odd region inside it.
        let inside = Region {
            x: 3,
            y: 5,
            width: 101,
            height: 37,
        };
        for region in [whole(w as u32, h as u32), inside] {
            let expected = halved_by_hand(&rgb, w, region);
            for rows in &sources {
                let (halved, hw, hh) = rows.halved_rgb(region);
                assert_eq!(
                    (hw, hh),
                    (region.width.div_ceil(2), region.height.div_ceil(2))
                );
                assert!(
                    halved == expected,
                    "{:?} halved wrongly",
                    rows.format.layout()
                );
            }
        }
    }
}
