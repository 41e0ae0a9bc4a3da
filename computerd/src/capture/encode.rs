//! PNG encoding of a [`Frame`], tuned for speed on desktop screenshots.

use super::frame::Frame;
use super::CaptureError;
use png::{BitDepth, ColorType, Compression, Encoder, Filter};

/// Encodes `frame` as an 8-bit RGB PNG.
///
/// `Compression::Fastest` is fdeflate's ultra-fast mode; paired with the `Up`
/// filter it shrinks desktops (large flat areas, text repeated across rows)
/// almost as well as adaptive filtering at a fraction of the time; see
/// `examples/capture_bench.rs` for the numbers.
pub fn encode_png(frame: &Frame) -> Result<Vec<u8>, CaptureError> {
    let failed = |source| CaptureError::Encode {
        width: frame.width,
        height: frame.height,
        source,
    };
    // Desktops usually compress 10x or better; start there to avoid most
    // regrowth.
    let mut out = Vec::with_capacity(frame.rgb.len() / 8);
    let mut encoder = Encoder::new(&mut out, frame.width, frame.height);
    encoder.set_color(ColorType::Rgb);
    encoder.set_depth(BitDepth::Eight);
    encoder.set_compression(Compression::Fastest);
    encoder.set_filter(Filter::Up);
    let mut writer = encoder.write_header().map_err(failed)?;
    writer.write_image_data(&frame.rgb).map_err(failed)?;
    writer.finish().map_err(failed)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_decoder() {
        let (width, height) = (5u32, 3u32);
        let rgb: Vec<u8> = (0..width * height * 3).map(|i| (i * 11) as u8).collect();
        let png = encode_png(&Frame {
            width,
            height,
            rgb: rgb.clone(),
        })
        .expect("encodes");
        let mut reader = png::Decoder::new(std::io::Cursor::new(png))
            .read_info()
            .expect("header");
        let mut buf = vec![0; reader.output_buffer_size().expect("size")];
        let info = reader.next_frame(&mut buf).expect("frame");
        assert_eq!(
            (info.width, info.height, info.color_type),
            (width, height, ColorType::Rgb)
        );
        assert_eq!(&buf[..info.buffer_size()], &rgb[..]);
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
