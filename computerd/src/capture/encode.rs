//! PNG encoding of a [`Frame`], tuned for size and speed on desktops.
//!
//! The chunks are written here; the image data is filtered and deflated
//! in strips on all cores (`strips`) with zlib-rs. Measured by
//! `examples/frame_bench.rs`; see the numbers in [`PngSettings::FRAMES`].

use super::filter::{FilterChoice, RowFilter};
use super::frame::Frame;
use super::palette::{bit_depth, index_shades, pack_indices, Indexed};
use super::strips::{zlib_stream, Rows};
use super::CaptureError;

/// How a frame's PNG is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PngSettings {
    /// zlib level of palette indices (which take no filter: differences
    /// of indices mean nothing).
    pub indexed_level: u32,
    /// Filters of RGB rows.
    pub rgb_filter: FilterChoice,
    /// zlib level of filtered RGB rows.
    pub rgb_level: u32,
}

impl PngSettings {
    /// The settings frames use, chosen from the candidates of
    /// `FRAME_BENCH_CANDIDATES=1 examples/frame_bench` (1280x800, two
    /// busy cores, so times are rough):
    /// - a 2-colour terminal (packed 1 bit a pixel): level 1 13.7 KB,
    ///   level 3 10.3 KB, level 6 8.6 KB, all within about 1 ms of each
    ///   other; the 8-bit indices before were 26.5 KB.
    /// - an antialiased terminal (RGB): `Up` 162 KB, `Paeth` 159 KB,
    ///   adaptive 148 KB at level 2; level 3 gains under 1% for more time,
    ///   level 1 loses 20%. fdeflate + `Up` before: 406 KB.
    /// - a Chromium form: adaptive level 2 65 KB (`Up` 71 KB; before
    ///   217 KB).
    pub const FRAMES: PngSettings = PngSettings {
        indexed_level: 3,
        rgb_filter: FilterChoice::Adaptive,
        rgb_level: 2,
    };
}

/// Encodes `frame` as a PNG: indexed when it has at most 256 colours
/// (flat desktops: window manager, terminals, plain pages), which decodes
/// to the frame's own pixels; indexed too when it has a few hundred and
/// its rarest shades merge within the bounds of `shades` (antialiased
/// text), where at most 2 % of the pixels move by at most 12 levels a
/// channel; 8-bit RGB, exact, otherwise.
pub fn encode_png(frame: &Frame) -> Result<Vec<u8>, CaptureError> {
    encode_png_with(frame, PngSettings::FRAMES)
}

/// [`encode_png`] with other settings, to compare candidates.
pub fn encode_png_with(frame: &Frame, settings: PngSettings) -> Result<Vec<u8>, CaptureError> {
    let (width, height) = (frame.width as usize, frame.height as usize);
    let failed = |source: std::io::Error| CaptureError::Encode {
        width: frame.width,
        height: frame.height,
        source,
    };
    if frame.rgb.len() != width * height * 3 || width == 0 || height == 0 {
        return Err(failed(std::io::Error::other(format!(
            "the frame holds {} bytes of RGB, not width x height x 3 = {}",
            frame.rgb.len(),
            width * height * 3
        ))));
    }
    let indexed = index_shades(&frame.rgb);
    // Few colours pack several pixels to the byte (a terminal: 8).
    let depth = indexed
        .as_ref()
        .map_or(8, |i| bit_depth(i.palette.len() / 3));
    let packed = indexed
        .as_ref()
        .map(|i| pack_indices(&i.indices, width, depth));
    let (rows, palette) = match (&indexed, &packed) {
        (Some(Indexed { palette, .. }), Some(packed)) => (
            Rows {
                raw: packed,
                row_len: packed.len() / height,
                bpp: 1,
                height,
                filter: FilterChoice::All(RowFilter::None),
                level: settings.indexed_level,
            },
            Some(palette),
        ),
        _ => (
            Rows {
                raw: &frame.rgb,
                row_len: width * 3,
                bpp: 3,
                height,
                filter: settings.rgb_filter,
                level: settings.rgb_level,
            },
            None,
        ),
    };
    let data = zlib_stream(&rows).map_err(failed)?;
    let mut out = Vec::with_capacity(data.len() + palette.map_or(0, Vec::len) + 64);
    out.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&frame.width.to_be_bytes());
    header.extend_from_slice(&frame.height.to_be_bytes());
    // Bits a sample; colour type 3 (palette) or 2 (RGB); deflate; filters of
    // method 0; no interlace.
    header.extend_from_slice(&[depth, if palette.is_some() { 3 } else { 2 }, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &header);
    if let Some(palette) = palette {
        chunk(&mut out, b"PLTE", palette);
    }
    chunk(&mut out, b"IDAT", &data);
    chunk(&mut out, b"IEND", &[]);
    Ok(out)
}

/// Appends one PNG chunk: length, type, data, CRC of type and data.
fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    out.extend_from_slice(&crc.finalize().to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use png::{BitDepth, ColorType};

    /// Width, height, colour type as stored, and the pixels as RGB8.
    fn decode(png: &[u8]) -> (u32, u32, ColorType, Vec<u8>) {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
        decoder.set_transformations(png::Transformations::EXPAND);
        let mut reader = decoder.read_info().expect("header");
        let stored = reader.info().color_type;
        let mut buf = vec![0; reader.output_buffer_size().expect("size")];
        let info = reader.next_frame(&mut buf).expect("frame");
        assert_eq!(
            (info.color_type, info.bit_depth),
            (ColorType::Rgb, BitDepth::Eight)
        );
        buf.truncate(info.buffer_size());
        (info.width, info.height, stored, buf)
    }

    fn frame(width: u32, height: u32, pixel: impl Fn(u32) -> [u8; 3]) -> Frame {
        Frame {
            width,
            height,
            rgb: (0..width * height).flat_map(pixel).collect(),
        }
    }

    #[test]
    fn few_colours_give_a_palette_png_of_the_same_pixels() {
        // A desktop-like frame: bands of 40 colours, with runs and repeats.
        let flat = frame(64, 48, |i| {
            let c = ((i / 7) % 40) as u8;
            [c * 6, 255 - c * 3, c ^ 0x5a]
        });
        let (w, h, stored, rgb) = decode(&encode_png(&flat).expect("encodes"));
        assert_eq!((w, h, stored), (64, 48, ColorType::Indexed));
        assert_eq!(rgb, flat.rgb);
    }

    #[test]
    fn up_to_16_colours_pack_pixels_and_decode_to_the_same_pixels() {
        // Odd widths leave a part-filled last byte in each row.
        for (colours, depth) in [(2u32, 1u8), (3, 2), (4, 2), (13, 4), (16, 4), (17, 8)] {
            let few = frame(37, 11, |i| {
                let c = ((i * 7 + i / 37) % colours) as u8;
                [c * 15, c, 255 - c]
            });
            let png = encode_png(&few).expect("encodes");
            // IHDR's bit depth: signature (8), length and type (8), size (8).
            assert_eq!(png[24], depth, "{colours} colours");
            let (w, h, stored, rgb) = decode(&png);
            assert_eq!((w, h, stored), (37, 11, ColorType::Indexed));
            assert_eq!(rgb, few.rgb, "{colours} colours");
        }
    }

    #[test]
    fn frames_deflated_in_strips_decode_to_the_same_pixels() {
        // 1280x800 is over the threshold for strips; text-like rows.
        let text = |colours: u32| {
            frame(1280, 800, move |i| {
                let (x, y) = (i % 1280, i / 1280);
                let ink = (x / 3 + y / 5 * 7 + (x * y) % 11) % colours;
                [(ink * 37) as u8, (ink * 11) as u8, (ink / 19) as u8]
            })
        };
        for colours in [2, 200, 5000] {
            let frame = text(colours);
            let (w, h, _, rgb) = decode(&encode_png(&frame).expect("encodes"));
            assert_eq!((w, h), (1280, 800));
            assert!(rgb == frame.rgb, "{colours} colours: the pixels differ");
        }
    }

    #[test]
    fn more_than_256_colours_give_an_rgb_png_of_the_same_pixels() {
        let busy = frame(40, 20, |i| {
            [(i * 11) as u8, (i * 7 / 3) as u8, (i >> 2) as u8]
        });
        let (w, h, stored, rgb) = decode(&encode_png(&busy).expect("encodes"));
        assert_eq!((w, h, stored), (40, 20, ColorType::Rgb));
        assert_eq!(rgb, busy.rgb);
    }

    #[test]
    fn wrong_buffer_size_is_an_error() {
        let err = encode_png(&Frame {
            width: 4,
            height: 4,
            rgb: vec![0; 5],
        })
        .unwrap_err();
        assert!(err.to_string().contains("4x4"), "{err}");
    }
}
