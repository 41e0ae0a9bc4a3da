//! [`Rescaler`]: keeps the last scaled frame of a screen (the region, its
//! source rows converted or halved, and the scaled pixels), and when the
//! next grab of the same capturer drew only a box of the screen, redoes
//! only that box: its source rows, then the scaled rows and columns the
//! filter reaches from them. A 4K screen with a busy terminal then scales
//! a tenth of the pixels.
//!
//! The scaled pixels redone match a whole scaling to within one level
//! (the filter's float rounding differs with the crop's offset).

use super::area::{Area, Drawn};
use super::frame::Frame;
use super::source::Pixels;
use super::ScaleError;
use computer_protocol::Region;
use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};

/// Above this share of the region drawn, the frame is scaled whole again
/// (on all cores) rather than in part.
const WHOLE_ABOVE: f64 = 0.4;
/// Lanczos3 reaches 3 source pixels each side at scale 1, more when
/// shrinking (as many as the scale).
const LOBES: f64 = 3.0;

/// How a region is scaled: from the region's own pixels or from their
/// 2x2 means, to `width` x `height`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scaling {
    pub region: Region,
    pub halve: bool,
    pub width: u32,
    pub height: u32,
}

impl Scaling {
    /// The source's size: the region's, or half of it rounded up.
    pub fn source_size(&self) -> (u32, u32) {
        if self.halve {
            (
                self.region.width.div_ceil(2),
                self.region.height.div_ceil(2),
            )
        } else {
            (self.region.width, self.region.height)
        }
    }

    /// The part of the source the output spans, exactly: half the region
    /// when halved (an odd side ends halfway into its last pixel).
    pub fn crop_size(&self) -> (f64, f64) {
        let (w, h) = (f64::from(self.region.width), f64::from(self.region.height));
        if self.halve {
            (w / 2.0, h / 2.0)
        } else {
            (w, h)
        }
    }

    /// The source rows of `area` of the screen (within the region): the
    /// region's pixels as RGB, or their 2x2 means.
    fn source_of(&self, pixels: &impl Pixels, area: Area) -> (Vec<u8>, Area) {
        let region = self.region;
        let rows = pixels.rows();
        if !self.halve {
            let part = Region {
                x: area.x,
                y: area.y,
                width: area.width,
                height: area.height,
            };
            let at = Area {
                x: area.x - region.x,
                y: area.y - region.y,
                ..area
            };
            return (rows.to_rgb(part), at);
        }
        // Whole 2x2 blocks of the region: from an even offset in it.
        let (x0, y0) = ((area.x - region.x) / 2, (area.y - region.y) / 2);
        let (x1, y1) = (
            (area.right() - region.x).div_ceil(2),
            (area.bottom() - region.y).div_ceil(2),
        );
        let part = Region {
            x: region.x + 2 * x0,
            y: region.y + 2 * y0,
            width: (2 * (x1 - x0)).min(region.width - 2 * x0),
            height: (2 * (y1 - y0)).min(region.height - 2 * y0),
        };
        let (rgb, w, h) = rows.halved_rgb(part);
        (
            rgb,
            Area {
                x: x0,
                y: y0,
                width: w,
                height: h,
            },
        )
    }
}

/// The last scaled frame of one capturer's grabs.
#[derive(Default)]
pub struct Rescaler {
    kept: Option<Kept>,
}

struct Kept {
    scaling: Scaling,
    /// The grab it is up to date with.
    generation: u64,
    /// Source pixels, RGB8, `source_size` of the scaling.
    source: Vec<u8>,
    frame: Frame,
}

impl Rescaler {
    /// `pixels` scaled as `scaling` says: the kept frame redone where the
    /// grab drew since it was made, or a whole new one from `scale_whole`
    /// (given the source rows and their size).
    pub fn scale<'a>(
        &'a mut self,
        pixels: &impl Pixels,
        scaling: Scaling,
        scale_whole: impl FnOnce(&[u8], u32, u32) -> Result<Frame, ScaleError>,
    ) -> Result<&'a Frame, ScaleError> {
        let generation = pixels.generation();
        let drawn = match &self.kept {
            Some(kept) if kept.scaling == scaling && generation != 0 => {
                pixels.drawn_since(kept.generation)
            }
            _ => Drawn::Unknown,
        };
        let region = Area {
            x: scaling.region.x,
            y: scaling.region.y,
            width: scaling.region.width,
            height: scaling.region.height,
        };
        let redo = match drawn {
            Drawn::Nothing => Some(Area::default()),
            Drawn::Within(area) => {
                let area = area.intersect(region);
                (area.pixels() as f64 <= WHOLE_ABOVE * region.pixels() as f64).then_some(area)
            }
            Drawn::Unknown => None,
        };
        match (redo, &mut self.kept) {
            (Some(area), Some(kept)) => {
                if !area.is_empty() {
                    kept.redo(pixels, area)?;
                }
                kept.generation = generation;
            }
            _ => {
                let (source, area) = scaling.source_of(pixels, region);
                let frame = scale_whole(&source, area.width, area.height)?;
                self.kept = Some(Kept {
                    scaling,
                    generation,
                    source,
                    frame,
                });
            }
        }
        Ok(&self.kept.as_ref().expect("kept above").frame)
    }
}

impl Kept {
    /// Redoes the source rows of `area` of the screen and the scaled
    /// pixels they reach.
    fn redo(&mut self, pixels: &impl Pixels, area: Area) -> Result<(), ScaleError> {
        let scaling = self.scaling;
        let (sw, sh) = scaling.source_size();
        let (part, at) = scaling.source_of(pixels, area);
        let row = at.width as usize * 3;
        for (i, src) in part.chunks_exact(row).enumerate() {
            let start = ((at.y as usize + i) * sw as usize + at.x as usize) * 3;
            self.source[start..start + row].copy_from_slice(src);
        }
        // The output pixels whose filter window meets the redone source.
        let (crop_w, crop_h) = scaling.crop_size();
        let (fw, fh) = (scaling.width, scaling.height);
        let reach = |from: u32, to: u32, crop: f64, out: u32| {
            let scale = crop / f64::from(out);
            let support = LOBES * scale.max(1.0) + 1.0;
            let first = ((f64::from(from) - support) / scale - 0.5).floor().max(0.0) as u32;
            let end = ((f64::from(to) + support) / scale + 0.5)
                .ceil()
                .min(f64::from(out)) as u32;
            (first.min(out), end.max(first.min(out)), scale)
        };
        let (ox0, ox1, scale_x) = reach(at.x, at.right(), crop_w, fw);
        let (oy0, oy1, scale_y) = reach(at.y, at.bottom(), crop_h, fh);
        let (ow, oh) = (ox1 - ox0, oy1 - oy0);
        if ow == 0 || oh == 0 {
            return Ok(());
        }
        let source = ImageRef::new(sw, sh, &self.source, PixelType::U8x3)?;
        let mut target = Image::new(ow, oh, PixelType::U8x3);
        let options = ResizeOptions::new()
            .crop(
                f64::from(ox0) * scale_x,
                f64::from(oy0) * scale_y,
                f64::from(ow) * scale_x,
                f64::from(oh) * scale_y,
            )
            .resize_alg(ResizeAlg::Convolution(FilterType::Lanczos3));
        Resizer::new().resize(&source, &mut target, &options)?;
        let row = ow as usize * 3;
        for (i, src) in target.buffer().chunks_exact(row).enumerate() {
            let start = ((oy0 as usize + i) * fw as usize + ox0 as usize) * 3;
            self.frame.rgb[start..start + row].copy_from_slice(src);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::convert::Rows;

    /// A frame posing as a grab: its number and what it says was drawn.
    struct Drawing {
        frame: Frame,
        generation: u64,
        drawn: Drawn,
    }

    impl Pixels for Drawing {
        fn size(&self) -> (u32, u32) {
            (self.frame.width, self.frame.height)
        }
        fn rows(&self) -> Rows<'_> {
            Pixels::rows(&self.frame)
        }
        fn generation(&self) -> u64 {
            self.generation
        }
        fn drawn_since(&self, _earlier: u64) -> Drawn {
            self.drawn
        }
    }

    /// Text-like pixels: fine detail the filter must carry.
    fn texture(width: u32, height: u32, seed: u32) -> Frame {
        let rgb = (0..width * height)
            .flat_map(|i| {
                let (x, y) = (i % width, i / width);
                let ink = ((x * 7 + y * 13 + seed) % 17 < 5) as u8;
                [ink * 200 + (x % 50) as u8, (y % 256) as u8, ink * 90]
            })
            .collect();
        Frame { width, height, rgb }
    }

    fn scale_whole(scaling: Scaling) -> impl FnOnce(&[u8], u32, u32) -> Result<Frame, ScaleError> {
        move |rgb, sw, sh| {
            let source = ImageRef::new(sw, sh, rgb, PixelType::U8x3)?;
            let mut out = Image::new(scaling.width, scaling.height, PixelType::U8x3);
            let (cw, ch) = scaling.crop_size();
            let options = ResizeOptions::new()
                .crop(0.0, 0.0, cw, ch)
                .resize_alg(ResizeAlg::Convolution(FilterType::Lanczos3));
            Resizer::new().resize(&source, &mut out, &options)?;
            Ok(Frame {
                width: scaling.width,
                height: scaling.height,
                rgb: out.into_vec(),
            })
        }
    }

    fn worst_difference(a: &Frame, b: &Frame) -> u8 {
        a.rgb
            .iter()
            .zip(&b.rgb)
            .map(|(x, y)| x.abs_diff(*y))
            .max()
            .unwrap()
    }

    #[test]
    fn a_drawn_box_redone_matches_scaling_the_whole_frame() {
        // Odd sides and an offset region, halved (0.37) and not (0.75).
        let region = Region {
            x: 30,
            y: 21,
            width: 801,
            height: 601,
        };
        for (halve, width, height) in [(true, 297, 222), (false, 600, 450)] {
            let scaling = Scaling {
                region,
                halve,
                width,
                height,
            };
            let before = texture(900, 700, 0);
            let mut after = before.clone();
            // Draw a box straddling no block boundary in particular.
            let drawn = Area {
                x: 101,
                y: 57,
                width: 63,
                height: 41,
            };
            for y in drawn.y..drawn.bottom() {
                for x in drawn.x..drawn.right() {
                    let at = ((y * 900 + x) * 3) as usize;
                    after.rgb[at..at + 3].copy_from_slice(&[(x * 5) as u8, 255, (y * 3) as u8]);
                }
            }
            let mut rescaler = Rescaler::default();
            let first = Drawing {
                frame: before,
                generation: 1,
                drawn: Drawn::Unknown,
            };
            let old = rescaler
                .scale(&first, scaling, scale_whole(scaling))
                .unwrap()
                .clone();
            let second = Drawing {
                frame: after.clone(),
                generation: 2,
                drawn: Drawn::Within(drawn),
            };
            let redone = rescaler
                .scale(&second, scaling, scale_whole(scaling))
                .unwrap()
                .clone();
            let fresh = Rescaler::default()
                .scale(&second, scaling, scale_whole(scaling))
                .unwrap()
                .clone();
            assert!(worst_difference(&old, &fresh) > 50, "the box shows");
            let worst = worst_difference(&redone, &fresh);
            assert!(
                worst <= 1,
                "halve {halve}: redone differs by {worst} levels"
            );
            // Told nothing was drawn, the kept frame stays as it was: the
            // part redone above really was the box alone.
            let third = Drawing {
                frame: texture(900, 700, 5),
                generation: 3,
                drawn: Drawn::Nothing,
            };
            let kept = rescaler
                .scale(&third, scaling, scale_whole(scaling))
                .unwrap();
            assert_eq!(kept.rgb, redone.rgb);
        }
    }
}
