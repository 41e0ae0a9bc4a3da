//! What a screenshot's PNG shows, as far as `doctor --deep` cares: its size,
//! and whether anything was drawn on it yet.

/// What a PNG shows, as far as the screenshot check cares.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Picture {
    pub width: u32,
    pub height: u32,
    /// Every pixel is black (alpha aside): nothing was drawn yet. The
    /// drawn desktop may well be one colour, its background.
    pub black: bool,
}

/// Why the screenshot's bytes could not be looked at.
#[derive(Debug, thiserror::Error)]
pub(super) enum PictureError {
    #[error("the screenshot is not a PNG: {0}")]
    NotPng(#[from] png::DecodingError),
    #[error("the screenshot is too large to decode")]
    TooLarge,
}

pub(super) fn picture(png: &[u8]) -> Result<Picture, PictureError> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
    // A one-colour desktop comes as a palette, whose index 0 is no colour.
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info()?;
    let (color_type, bit_depth) = reader.output_color_type();
    let size = reader.output_buffer_size().ok_or(PictureError::TooLarge)?;
    let mut pixels = vec![0u8; size];
    let frame = reader.next_frame(&mut pixels)?;
    let samples = color_type.samples();
    let bytes = usize::from(bit_depth as u8).div_ceil(8);
    // Colour samples only: an opaque alpha is not drawing.
    let colours = match color_type {
        png::ColorType::GrayscaleAlpha | png::ColorType::Rgba => samples - 1,
        _ => samples,
    } * bytes;
    let pixel = (samples * bytes).max(1);
    let data = &pixels[..frame.buffer_size()];
    let black = data
        .chunks_exact(frame.line_size)
        .flat_map(|row| row[..frame.width as usize * pixel].chunks_exact(pixel))
        .all(|p| p[..colours].iter().all(|b| *b == 0));
    Ok(Picture {
        width: frame.width,
        height: frame.height,
        black,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_of(width: u32, height: u32, pixels: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(pixels).unwrap();
        writer.finish().unwrap();
        out
    }

    #[test]
    fn tells_a_blank_screen_from_a_drawn_one() {
        let black = png_of(4, 2, &[0; 24]);
        assert_eq!(
            picture(&black).unwrap(),
            Picture {
                width: 4,
                height: 2,
                black: true
            }
        );
        // The desktop's background alone is drawn, though one colour.
        let slate: Vec<u8> = [0x2e, 0x3a, 0x4a].repeat(8);
        assert!(!picture(&png_of(4, 2, &slate)).unwrap().black);
        let mut palette = Vec::new();
        let mut encoder = png::Encoder::new(&mut palette, 4, 2);
        encoder.set_color(png::ColorType::Indexed);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_palette(vec![0x2e, 0x3a, 0x4a]);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&[0; 8]).unwrap();
        writer.finish().unwrap();
        assert!(!picture(&palette).unwrap().black, "index 0 is not black");
        let mut one_pixel = [0u8; 24];
        one_pixel[23] = 9;
        assert!(!picture(&png_of(4, 2, &one_pixel)).unwrap().black);
        let e = picture(b"not a png").unwrap_err();
        assert!(matches!(e, PictureError::NotPng(_)), "{e:?}");
        assert!(
            e.to_string().starts_with("the screenshot is not a PNG"),
            "{e}"
        );
    }
}
