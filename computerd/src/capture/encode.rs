//! PNG encoding of a [`Frame`], tuned for size and speed on desktops.

use super::frame::Frame;
use super::palette::{index_colours, Indexed};
use super::CaptureError;
use png::{BitDepth, ColorType, Compression, DeflateCompression, Encoder, Filter};

/// Encodes `frame` as a PNG: 8-bit indexed when it has at most 256
/// colours (flat desktops: window manager, terminals, plain pages), 8-bit
/// RGB otherwise. Both decode to the same pixels.
///
/// The settings are measured by `examples/capture_bench.rs` on a Fluxbox +
/// xterm desktop; see the numbers there and in its module comment.
pub fn encode_png(frame: &Frame) -> Result<Vec<u8>, CaptureError> {
    match index_colours(&frame.rgb) {
        Some(indexed) if indexed.indices.len() == frame.width as usize * frame.height as usize => {
            encode_indexed(frame, &indexed)
        }
        _ => encode_rgb(frame),
    }
}

/// The indexed PNG: palette indices take no filter (differences of
/// indices mean nothing), and zlib level 3 finds the repeated glyph rows
/// of a desktop. Measured on issue 12's Fluxbox + xterm desktop (1280x800,
/// 154 colours; `examples/capture_bench.rs`): 23 KB in 4.5 ms, where the
/// RGB `Fastest + Up` PNG sent before was 109 KB in 0.8 ms; level 1 gives
/// 44 KB in 2.3 ms, level 2 29 KB in 3.7 ms, level 6 20 KB in 8.5 ms, and
/// fdeflate on unfiltered indices 630 KB. With the grab (0.8 ms) and the
/// colour count (1 ms) a frame stays well under 10 ms.
fn encode_indexed(frame: &Frame, indexed: &Indexed) -> Result<Vec<u8>, CaptureError> {
    write(frame, &indexed.indices, |encoder| {
        encoder.set_color(ColorType::Indexed);
        encoder.set_palette(indexed.palette.clone());
        encoder.set_filter(Filter::NoFilter);
        encoder.set_deflate_compression(DeflateCompression::Level(3));
    })
}

/// The RGB PNG, for photos and scaled frames: fdeflate's fastest mode
/// with the `Up` filter, as before. A scaled 4K frame must stay fast, and
/// the palette's bail-out costs about 0.05 ms on such frames.
fn encode_rgb(frame: &Frame) -> Result<Vec<u8>, CaptureError> {
    write(frame, &frame.rgb, |encoder| {
        encoder.set_color(ColorType::Rgb);
        encoder.set_compression(Compression::Fastest);
        encoder.set_filter(Filter::Up);
    })
}

fn write(
    frame: &Frame,
    data: &[u8],
    configure: impl FnOnce(&mut Encoder<&mut Vec<u8>>),
) -> Result<Vec<u8>, CaptureError> {
    let failed = |source| CaptureError::Encode {
        width: frame.width,
        height: frame.height,
        source,
    };
    // Desktops usually compress 20x or better; start there to avoid most
    // regrowth.
    let mut out = Vec::with_capacity(frame.rgb.len() / 20);
    let mut encoder = Encoder::new(&mut out, frame.width, frame.height);
    encoder.set_depth(BitDepth::Eight);
    configure(&mut encoder);
    let mut writer = encoder.write_header().map_err(failed)?;
    writer.write_image_data(data).map_err(failed)?;
    writer.finish().map_err(failed)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
