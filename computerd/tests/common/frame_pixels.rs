//! The pixels of a frame computerd returned: any PNG it may send (RGB, or
//! indexed for a screen of few colours) decoded to 8-bit RGB.

use base64::Engine;
use serde_json::Value;

/// Width, height and RGB8 pixels of a PNG. Palettes are expanded, so an
/// indexed frame compares equal to the RGB frame of the same screen.
pub fn decode_png_rgb(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("frame");
    assert_eq!(
        (info.color_type, info.bit_depth),
        (png::ColorType::Rgb, png::BitDepth::Eight),
        "computerd's PNGs are 8-bit RGB or indexed"
    );
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// The image of an observation (`image_base64`), decoded.
pub fn observation_rgb(observation: &Value) -> (u32, u32, Vec<u8>) {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(observation["image_base64"].as_str().expect("an image"))
        .expect("base64");
    decode_png_rgb(&bytes)
}
