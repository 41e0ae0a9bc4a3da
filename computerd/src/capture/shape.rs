//! Shaping a captured screen into the frame an agent gets: the region it
//! asked for, scaled down to fit `max_side` and `max_pixels` with a good
//! filter, encoded as PNG or JPEG, and kept under 1 MB.

use super::bands::band_count;
use super::encode::encode_png;
use super::frame::Frame;
use super::rescale::{Rescaler, Scaling};
use super::source::Pixels;
use super::{CaptureError, ScaleError};
use computer_protocol::frame::{DEFAULT_JPEG_QUALITY, FRAME_MAX_BYTES};
use computer_protocol::{FrameOptions, FrameTransform, ImageFormat, InvalidInput, Region};
use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};

/// JPEG qualities tried, in order, when a frame is over 1 MB.
const JPEG_FALLBACK_QUALITIES: [u8; 3] = [60, 40, 25];
/// Each further size step keeps this share of each side.
const SHRINK_STEP: f64 = 0.75;
/// Below this many source pixels a frame scales on one thread (1280x800
/// is one megapixel; a 4K screen eight).
const PARALLEL_MIN_SOURCE_PIXELS: usize = 2_000_000;

/// A frame ready to send.
#[derive(Debug)]
pub struct Shaped {
    pub bytes: Vec<u8>,
    pub format: ImageFormat,
    pub transform: FrameTransform,
    /// Set when the frame had to be made smaller or rougher than asked.
    pub reduced: Option<String>,
}

/// Checks that `region` lies on a `width`x`height` screen.
pub fn check_region(region: Region, width: u32, height: u32) -> Result<Region, InvalidInput> {
    let fits = region.width > 0
        && region.height > 0
        && u64::from(region.x) + u64::from(region.width) <= u64::from(width)
        && u64::from(region.y) + u64::from(region.height) <= u64::from(height);
    if fits {
        Ok(region)
    } else {
        Err(InvalidInput(format!(
            "`region` {}x{} at ({}, {}) is not on the screen, which is {width}x{height}: give a width and height of 1 or more with x + width <= {width} and y + height <= {height}",
            region.width, region.height, region.x, region.y
        )))
    }
}

/// The frame size for a `width`x`height` region under the bounds: the
/// region's own size when it fits, else scaled down keeping its aspect.
pub fn fitted_size(width: u32, height: u32, options: &FrameOptions) -> (u32, u32) {
    let mut scale: f64 = 1.0;
    if let Some(side) = options.max_side {
        scale = scale.min(f64::from(side) / f64::from(width.max(height)));
    }
    if let Some(pixels) = options.max_pixels {
        let area = f64::from(width) * f64::from(height);
        scale = scale.min((pixels as f64 / area).sqrt());
    }
    let side = |v: u32| ((f64::from(v) * scale).floor() as u32).clamp(1, v);
    (side(width), side(height))
}

/// Crops, scales and encodes `frame` (the whole screen, grabbed or RGB).
pub fn shape(
    frame: &impl Pixels,
    region: Region,
    options: &FrameOptions,
) -> Result<Shaped, CaptureError> {
    shape_kept(frame, region, options, &mut Rescaler::default())
}

/// [`shape`], keeping the scaled frame in `rescaler`: the next grab of
/// the same capturer scaled the same way redoes only what was drawn.
pub fn shape_kept(
    frame: &impl Pixels,
    region: Region,
    options: &FrameOptions,
    rescaler: &mut Rescaler,
) -> Result<Shaped, CaptureError> {
    let (mut fw, mut fh) = fitted_size(region.width, region.height, options);
    let asked_quality = options.quality.unwrap_or(DEFAULT_JPEG_QUALITY);
    let mut quality = asked_quality;
    let mut reduced = None;
    let mut fallbacks = JPEG_FALLBACK_QUALITIES
        .iter()
        .copied()
        .filter(move |q| *q < asked_quality);
    loop {
        let pixels = scaled(frame, region, fw, fh, rescaler)?;
        let bytes = match options.format {
            ImageFormat::Png => encode_png(&pixels)?,
            ImageFormat::Jpeg => encode_jpeg(&pixels, quality)?,
        };
        if bytes.len() <= FRAME_MAX_BYTES || (fw <= 64 && fh <= 64) {
            return Ok(Shaped {
                bytes,
                format: options.format,
                transform: FrameTransform {
                    region,
                    frame_width: fw,
                    frame_height: fh,
                },
                reduced,
            });
        }
        // Over 1 MB: a rougher JPEG first, then fewer pixels.
        let over = bytes.len();
        match (options.format, fallbacks.next()) {
            (ImageFormat::Jpeg, Some(lower)) => {
                quality = lower;
                reduced = Some(format!(
                    "the frame was {over} bytes, over the 1 MB limit, so its JPEG quality was lowered to {quality}"
                ));
            }
            _ => {
                fw = ((f64::from(fw) * SHRINK_STEP) as u32).max(1);
                fh = ((f64::from(fh) * SHRINK_STEP) as u32).max(1);
                reduced = Some(format!(
                    "the frame was {over} bytes, over the 1 MB limit, so it was scaled down to {fw}x{fh}; ask for a `region` to see details, or `format: jpeg`"
                ));
            }
        }
    }
}

/// The region of `source` at `fw`x`fh` as RGB; an RGB frame itself when
/// it is shown whole at its own size (the common case costs no copy).
/// Scaled frames are kept in `rescaler`, and redone only where drawn.
fn scaled<'a>(
    source: &'a impl Pixels,
    region: Region,
    fw: u32,
    fh: u32,
    rescaler: &'a mut Rescaler,
) -> Result<std::borrow::Cow<'a, Frame>, CaptureError> {
    let (width, height) = source.size();
    let whole = region.x == 0 && region.y == 0 && region.width == width && region.height == height;
    if fw == region.width && fh == region.height {
        // At its own size a region is only cut out (and converted).
        return Ok(match source.frame() {
            Some(frame) if whole => std::borrow::Cow::Borrowed(frame),
            _ => std::borrow::Cow::Owned(Frame {
                width: fw,
                height: fh,
                rgb: source.rows().to_rgb(region),
            }),
        });
    }
    // Shown at half size or less (a 4K screen in the default bounds), the
    // region is halved first: 2x2 means, read once from the server's
    // pixels, leave the filter a quarter of them with the same sharpness
    // where it matters, at the final size.
    let scaling = Scaling {
        region,
        halve: 2 * fw <= region.width && 2 * fh <= region.height,
        width: fw,
        height: fh,
    };
    let (crop_w, crop_h) = scaling.crop_size();
    let frame = rescaler
        .scale(source, scaling, |rgb, sw, sh| {
            scale_whole(rgb, (sw, sh), (crop_w, crop_h), (fw, fh))
        })
        .map_err(|source| CaptureError::Scale {
            width: fw,
            height: fh,
            source,
        })?;
    Ok(std::borrow::Cow::Borrowed(frame))
}

/// `rgb` (`sw` x `sh`) scaled to `fw` x `fh` from its top-left
/// `crop_w` x `crop_h` (fractional when halved from an odd side).
fn scale_whole(
    rgb: &[u8],
    (sw, sh): (u32, u32),
    (crop_w, crop_h): (f64, f64),
    (fw, fh): (u32, u32),
) -> Result<Frame, ScaleError> {
    let source = ImageRef::new(sw, sh, rgb, PixelType::U8x3)?;
    let (w, h) = (fw as usize, fh as usize);
    let mut out = vec![0u8; w * h * 3];
    // Big regions scale in bands of output rows on all cores. Each band
    // reads the source rows its filter reaches (clamped to the region, not
    // to the band), so the bands join without a seam.
    let bands = band_count(sw as usize * sh as usize, PARALLEL_MIN_SOURCE_PIXELS, h);
    let band_rows = h.div_ceil(bands);
    let scale_y = crop_h / f64::from(fh);
    let band = |index: usize, out: &mut [u8]| -> Result<(), ScaleError> {
        let rows = out.len() / (w * 3);
        let top = (index * band_rows) as f64 * scale_y;
        let mut target = Image::from_slice_u8(fw, rows as u32, out, PixelType::U8x3)?;
        // Lanczos3 keeps text readable when shrinking.
        let options = ResizeOptions::new()
            .crop(0.0, top, crop_w, rows as f64 * scale_y)
            .resize_alg(ResizeAlg::Convolution(FilterType::Lanczos3));
        Ok(Resizer::new().resize(&source, &mut target, &options)?)
    };
    let results: Vec<Result<(), ScaleError>> = std::thread::scope(|scope| {
        let mut outs = out.chunks_mut(band_rows * w * 3).enumerate();
        let first = outs.next();
        let others: Vec<_> = outs
            .map(|(index, out)| scope.spawn(move || band(index, out)))
            .collect();
        let mut results = vec![first.map_or(Ok(()), |(index, out)| band(index, out))];
        results.extend(
            others
                .into_iter()
                .map(|handle| handle.join().unwrap_or(Err(ScaleError::BandPanicked))),
        );
        results
    });
    results.into_iter().collect::<Result<(), ScaleError>>()?;
    Ok(Frame {
        width: fw,
        height: fh,
        rgb: out,
    })
}

fn encode_jpeg(frame: &Frame, quality: u8) -> Result<Vec<u8>, CaptureError> {
    let failed = |source: ScaleError| CaptureError::Scale {
        width: frame.width,
        height: frame.height,
        source,
    };
    let (Ok(w), Ok(h)) = (u16::try_from(frame.width), u16::try_from(frame.height)) else {
        return Err(failed(ScaleError::JpegTooLarge));
    };
    let mut out = Vec::with_capacity(frame.rgb.len() / 10);
    jpeg_encoder::Encoder::new(&mut out, quality)
        .encode(&frame.rgb, w, h, jpeg_encoder::ColorType::Rgb)
        .map_err(|e| failed(e.into()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(max_side: Option<u32>, max_pixels: Option<u64>) -> FrameOptions {
        FrameOptions {
            max_side,
            max_pixels,
            ..Default::default()
        }
    }

    #[test]
    fn the_default_bounds_leave_1280x800_alone_and_shrink_4k() {
        let defaults = options(Some(1568), Some(1_150_000));
        assert_eq!(fitted_size(1280, 800, &defaults), (1280, 800));
        let (w, h) = fitted_size(3840, 2160, &defaults);
        assert!(w <= 1568 && h <= 1568 && u64::from(w) * u64::from(h) <= 1_150_000);
        assert!((f64::from(w) / f64::from(h) - 3840.0 / 2160.0).abs() < 0.01);
        // max_side alone, and no bounds at all.
        assert_eq!(
            fitted_size(3840, 2160, &options(Some(1920), None)),
            (1920, 1080)
        );
        assert_eq!(fitted_size(3840, 2160, &options(None, None)), (3840, 2160));
        // A small region is never blown up.
        assert_eq!(fitted_size(200, 100, &defaults), (200, 100));
    }

    fn gradient(width: u32, height: u32) -> Frame {
        let rgb = (0..width * height)
            .flat_map(|i| {
                let (x, y) = (i % width, i / width);
                [(x % 256) as u8, (y % 256) as u8, ((x ^ y) % 256) as u8]
            })
            .collect();
        Frame { width, height, rgb }
    }

    #[test]
    fn a_big_region_scaled_in_bands_matches_one_pass() {
        // 2400x1300 is over the threshold; 1001 rows do not split evenly.
        let frame = gradient(2400, 1300);
        let region = Region {
            x: 100,
            y: 50,
            width: 2200,
            height: 1230,
        };
        let (fw, fh) = (1790, 1001);
        let mut rescaler = Rescaler::default();
        let banded = scaled(&frame, region, fw, fh, &mut rescaler).unwrap();
        let part = frame.rows().to_rgb(region);
        let source = ImageRef::new(2200, 1230, &part, PixelType::U8x3).unwrap();
        let mut whole = Image::new(fw, fh, PixelType::U8x3);
        let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::Lanczos3));
        Resizer::new()
            .resize(&source, &mut whole, &options)
            .unwrap();
        // Float rounding of a band's top may move a value by one level;
        // anything more would be a seam.
        let worst = banded
            .rgb
            .iter()
            .zip(whole.buffer())
            .map(|(a, b)| a.abs_diff(*b))
            .max()
            .unwrap();
        assert!(worst <= 1, "bands differ from one pass by {worst} levels");
    }

    #[test]
    fn a_region_at_its_own_size_is_the_screen_pixels() {
        let frame = gradient(300, 200);
        let region = Region {
            x: 50,
            y: 20,
            width: 40,
            height: 30,
        };
        let shaped = shape(&frame, region, &options(None, None)).unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(shaped.bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut buf).unwrap();
        for (y, x) in [(0, 0), (29, 39), (10, 7)] {
            let at = (y * 40 + x) * 3;
            assert_eq!(
                &buf[at..at + 3],
                &frame.pixel(50 + x as u32, 20 + y as u32).unwrap()[..]
            );
        }
    }

    #[test]
    fn jpeg_frames_decode_and_stay_under_the_limit() {
        let frame = gradient(640, 400);
        let jpeg = FrameOptions {
            format: ImageFormat::Jpeg,
            quality: Some(90),
            ..Default::default()
        };
        let region = Region {
            x: 0,
            y: 0,
            width: 640,
            height: 400,
        };
        let shaped = shape(&frame, region, &jpeg).unwrap();
        assert_eq!(&shaped.bytes[..2], &[0xFF, 0xD8]);
        assert!(shaped.bytes.len() <= FRAME_MAX_BYTES);
        assert!(shaped.reduced.is_none());
    }

    #[test]
    fn a_frame_over_a_megabyte_is_made_smaller_and_says_so() {
        // Noise does not compress: 1200x1000 RGB noise is about 3.6 MB.
        let mut seed = 7u32;
        let rgb = (0..1200 * 1000 * 3)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (seed >> 16) as u8
            })
            .collect();
        let frame = Frame {
            width: 1200,
            height: 1000,
            rgb,
        };
        let region = Region {
            x: 0,
            y: 0,
            width: 1200,
            height: 1000,
        };
        let shaped = shape(&frame, region, &options(None, None)).unwrap();
        assert!(shaped.bytes.len() <= FRAME_MAX_BYTES);
        assert!(shaped.reduced.as_deref().unwrap().contains("1 MB"));
        assert!(shaped.transform.frame_width < 1200);
    }

    #[test]
    fn regions_off_the_screen_are_refused() {
        assert!(check_region(
            Region {
                x: 0,
                y: 0,
                width: 1280,
                height: 800
            },
            1280,
            800
        )
        .is_ok());
        let e = check_region(
            Region {
                x: 1200,
                y: 0,
                width: 100,
                height: 10,
            },
            1280,
            800,
        )
        .unwrap_err();
        assert!(e.0.contains("`region`") && e.0.contains("1280x800"), "{e}");
        assert!(check_region(
            Region {
                x: 0,
                y: 0,
                width: 0,
                height: 10
            },
            1280,
            800
        )
        .is_err());
    }
}
